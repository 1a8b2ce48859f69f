import { describe, expect, it } from "vitest";
import { DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "../../src/dashboard/page";
import { api, errorCode, json, newSession, withCookie } from "../helpers";
import { apiWith } from "../support/app";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

function policy(response: Response): Map<string, string> {
  const header = response.headers.get("content-security-policy") ?? "";
  return new Map(
    header
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name = "", ...values]) => [name, values.join(" ")]),
  );
}

describe("the dashboard's page", () => {
  it("answers /dashboard and every path under it with the same HTML page", async () => {
    for (const path of [
      "/dashboard",
      "/dashboard/",
      "/dashboard/operator",
      "/dashboard/projects/x/videos/y",
      "/dashboard/a/b/c",
    ]) {
      const response = await api(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toContain(`<script type="module" src="${DASHBOARD_SCRIPT}"></script>`);
      expect(html).toContain(`<link rel="stylesheet" href="${DASHBOARD_STYLE}">`);
      // Nothing inline but the page's own markup: no inline script, no inline style.
      expect(html).not.toMatch(/<script>(?!<)|<script(?![^>]*\bsrc=)[^>]*>|<style|style=/);
    }
  });

  it("holds the page to its own origin: no inline script, no eval, never framed", async () => {
    const csp = policy(await api("/dashboard"));
    expect(csp.get("script-src")).toBe("'self'");
    expect(csp.get("style-src")).toBe("'self'");
    expect(csp.get("default-src")).toBe("'none'");
    expect(csp.get("connect-src")).toBe("'self'");
    expect(csp.get("frame-ancestors")).toBe("'none'");
    for (const value of csp.values()) {
      expect(value).not.toContain("unsafe-inline");
      expect(value).not.toContain("unsafe-eval");
      expect(value).not.toContain("*");
    }
  });

  it("names the public origin in the policy when PUBLIC_BASE_URL is another host", async () => {
    const response = await apiWith({ PUBLIC_BASE_URL: "https://media.example.com" }, "/dashboard");
    const csp = policy(response);
    expect(csp.get("script-src")).toBe("'self'");
    expect(csp.get("connect-src")).toBe("'self' https://media.example.com");
    expect(csp.get("frame-src")).toBe("'self' https://media.example.com");
  });

  it("serves the dashboard's script and style from the Worker's assets", async () => {
    for (const [path, type] of [
      [DASHBOARD_SCRIPT, "javascript"],
      [DASHBOARD_STYLE, "text/css"],
    ] as const) {
      const response = await api(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toContain(type);
      expect((await response.text()).length).toBeGreaterThan(1000);
    }
  });
});

describe("GET / by who asks", () => {
  it("sends a browser to /dashboard", async () => {
    for (const accept of [BROWSER_ACCEPT, "text/html", "text/html, application/json", "TEXT/HTML;q=0.9, */*"]) {
      const response = await api("/", { headers: { accept }, redirect: "manual" });
      expect(response.status, accept).toBe(302);
      expect(new URL(response.headers.get("location") ?? "", "http://x").pathname).toBe("/dashboard");
    }
  });

  it("keeps the JSON for API clients", async () => {
    for (const accept of [
      undefined,
      "application/json",
      "*/*",
      "application/json, text/html",
      "application/json;q=1, text/html",
    ]) {
      const response = await api("/", { headers: accept ? { accept } : {}, redirect: "manual" });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get("vary")).toContain("Accept");
      expect(((await response.json()) as { openapi: string }).openapi).toBe("/v1/openapi.json");
    }
  });
});

describe("the Origin check, for the dashboard with no configuration", () => {
  const create = (origin: string) => json("POST", { name: "from a page" }, { origin });

  it("accepts a cookie write from the request's own origin, which ALLOWED_ORIGINS does not list", async () => {
    const session = await newSession();
    const response = await api("/v1/projects", withCookie(session, create("http://api.test")));
    expect(response.status).toBe(201);
  });

  it("accepts PUBLIC_BASE_URL's origin, and refuses every other", async () => {
    const session = await newSession();
    const bindings = { PUBLIC_BASE_URL: "https://media.example.com", ALLOWED_ORIGINS: "" };
    const ok = await apiWith(bindings, "/v1/projects", withCookie(session, create("https://media.example.com")));
    expect(ok.status).toBe(201);
    for (const origin of [
      "https://evil.example",
      "https://media.example.com.evil.example",
      "http://media.example.com",
      "null",
    ]) {
      const refused = await apiWith(bindings, "/v1/projects", withCookie(session, create(origin)));
      expect(refused.status, origin).toBe(403);
      expect(await errorCode(refused)).toBe("forbidden_origin");
    }
  });
});

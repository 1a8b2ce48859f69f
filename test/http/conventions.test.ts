import { describe, expect, it } from "vitest";
import { api, json, newProject, newSession, withCookie } from "../helpers";

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe("HTTP conventions", () => {
  it("answers unknown routes with a JSON not_found carrying the request id", async () => {
    const response = await api("/v1/nothing-here", { headers: { "x-request-id": "client-chosen" } });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toMatch(ULID);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toEqual({ code: "not_found", message: expect.any(String), requestId });
  });

  it("answers a known path with the wrong method 405 with Allow", async () => {
    const response = await api("/v1/projects", { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    const withId = await api("/v1/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV", { method: "PATCH" });
    expect(withId.status).toBe(405);
    expect(withId.headers.get("allow")).toBe("DELETE, GET, HEAD");
  });

  it("answers other methods on /v1/videos/bulk with 405, not as a video id that is not found", async () => {
    for (const method of ["GET", "PATCH", "DELETE", "PUT"]) {
      const response = await api("/v1/videos/bulk", method === "GET" ? { method } : json(method, {}));
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    }
  });

  it("serves the vendored files through the Worker, a missing one as any unknown path (run_worker_first)", async () => {
    const script = await api("/vendor/hls/hls.light.min.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(100_000);
    const missing = await api("/vendor/hls/nothing.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("puts a fresh request id on every response, successes included", async () => {
    const session = await newSession();
    const first = await api("/v1/account", withCookie(session));
    const second = await api("/v1/account", withCookie(session));
    expect(first.headers.get("x-request-id")).toMatch(ULID);
    expect(first.headers.get("x-request-id")).not.toBe(second.headers.get("x-request-id"));
  });

  it("serves an OpenAPI 3.1 document generated from the route schemas, and a reference page", async () => {
    const response = await api("/v1/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/v1/auth/signup", "/v1/projects", "/v1/projects/{projectId}/api-keys"]),
    );
    type Operation = { responses: Record<string, { description: string }> };
    const create = doc.paths["/v1/projects"]?.post as Operation;
    expect(create.responses["400"]?.description).toContain("invalid_name");
    // Error responses come from the middleware each route runs, as well as from its handler.
    const bulk = doc.paths["/v1/videos/bulk"]?.post as Operation;
    expect(Object.keys(bulk.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "422",
      "429",
      "500",
    ]);
    expect(bulk.responses["403"]?.description).toBe("`forbidden_origin`, `account_not_approved`, `insufficient_scope`");
    expect(bulk.responses["400"]?.description).toContain("invalid_project_id");
    const read = doc.paths["/v1/videos/{id}"]?.get as Operation;
    expect(read.responses["403"]?.description).not.toContain("forbidden_origin");
    const page = await api("/docs");
    expect(page.headers.get("content-type")).toContain("text/html");
    // The page is Scalar's reference (served from static assets) reading the document; see test/e2e/docs.test.ts.
    const html = await page.text();
    expect(html).toContain('<script src="/vendor/scalar/api-reference.js"></script>');
    expect(html).toContain('"url":"/v1/openapi.json"');
  });
});

describe("request bodies", () => {
  it("refuses a JSON body over 64 KiB with 413 payload_too_large, declared or streamed", async () => {
    const session = await newSession();
    const big = JSON.stringify({ name: "x".repeat(70 * 1024) });
    const declared = await api("/v1/projects", withCookie(session, json("POST", big)));
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const streamed = await api(
      "/v1/projects",
      withCookie(session, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Blob([big]).stream(),
      }),
    );
    expect(streamed.status).toBe(413);
  });
});

describe("cross-origin writes under cookie auth", () => {
  it("refuses an Origin outside ALLOWED_ORIGINS with forbidden_origin", async () => {
    const session = await newSession();
    const response = await api(
      "/v1/projects",
      withCookie(session, json("POST", { name: "x" }, { origin: "https://evil.example" })),
    );
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("forbidden_origin");
  });

  it("accepts allowed and same origins, and requests without Origin", async () => {
    const session = await newSession();
    for (const origin of ["https://dashboard.example", "http://api.test", undefined]) {
      const headers: Record<string, string> = origin ? { origin } : {};
      const response = await api("/v1/projects", withCookie(session, json("POST", { name: "x" }, headers)));
      expect(response.status).toBe(201);
    }
  });

  it("does not apply to safe methods", async () => {
    const session = await newSession();
    await newProject(session);
    const response = await api("/v1/projects", withCookie(session, { headers: { origin: "https://evil.example" } }));
    expect(response.status).toBe(200);
  });

  it("answers CORS preflights for allowed origins only", async () => {
    const preflight = (origin: string) =>
      api("/v1/projects", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
    const allowed = await preflight("https://dashboard.example");
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://dashboard.example");
    expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
    expect((await preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
  });
});

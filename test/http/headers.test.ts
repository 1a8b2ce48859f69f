import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/http/route";
import { HEADER_VARIANTS, JSON_CONTENT_TYPES } from "../fuzz/schemas";
import { api, bearer, clientIp, json, newVideo, newWorkspace, withCookie } from "../helpers";

/**
 * The API's test of a JSON Content-Type (docs/api-rules.md#json-bodies): the media type before the
 * first `;`, trimmed.
 */
const acceptsJson = (type: string) => type.split(";")[0]?.trim().toLowerCase() === "application/json";

async function workspace() {
  const { session, key, project } = await newWorkspace();
  const { video } = await newVideo(key);
  const ids: Record<string, string> = { projectId: project.id, id: video.id, videoId: video.id };
  return { session, key, ids };
}

/** Every route, with its path filled from the workspace (an unknown ULID where it has none). */
function requests(ids: Record<string, string>) {
  return ROUTES.map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
    // A route that takes JSON and nothing else; one that also takes a file's bytes (an audio
    // track) takes every other media type as such a file.
    takesJson:
      Object.keys((route.request?.body as { content?: object } | undefined)?.content ?? {}).join() ===
      "application/json",
  }));
}

describe("no header is a 500", () => {
  it("answers every route with every malformed header variant without a 5xx", async () => {
    const { session, key, ids } = await workspace();
    // A client address of its own: the operator API counts this test's wrong tokens against it.
    const ip = clientIp();
    for (const { method, path } of requests(ids)) {
      for (const extra of HEADER_VARIANTS) {
        for (const credential of [bearer(key), withCookie(session)]) {
          const headers = { ...(credential.headers as Record<string, string>), "cf-connecting-ip": ip, ...extra };
          const response = await api(`${path}?projectId=${ids.projectId}`, { method, headers });
          expect([method, path, extra, response.status]).toEqual([method, path, extra, expect.any(Number)]);
          expect(response.status, `${method} ${path} ${JSON.stringify(extra)}`).toBeLessThan(500);
        }
      }
    }
  });

  it("decides a JSON body by its media type alone, on every JSON route", async () => {
    const { session, key, ids } = await workspace();
    const ip = clientIp();
    const jsonRoutes = requests(ids).filter((r) => r.takesJson);
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(11);
    for (const { method, path } of jsonRoutes) {
      for (const type of JSON_CONTENT_TYPES) {
        const credential = path.includes("/admin/")
          ? {}
          : path.includes("/api-keys") || path.includes("encoding") || path === "/v1/projects"
            ? withCookie(session)
            : bearer(key);
        const headers = {
          ...(credential.headers as Record<string, string>),
          "content-type": type,
          "cf-connecting-ip": ip,
        };
        const response = await api(`${path}?projectId=${ids.projectId}`, { method, headers, body: "{}" });
        const where = `${method} ${path} with ${JSON.stringify(type)} -> ${response.status}`;
        expect(response.status, where).toBeLessThan(500);
        if (response.status !== 400) continue;
        const body = (await response.json()) as { error: { code: string; message: string } };
        if (acceptsJson(type)) expect(body.error.message, where).not.toMatch(/Content-Type/);
        else
          expect(body.error, where).toEqual(
            expect.objectContaining({ code: "invalid_body", message: "Content-Type must be application/json." }),
          );
      }
    }
  });

  it("accepts the odd but JSON spellings for real writes", async () => {
    const { session } = await workspace();
    const created = await api(
      "/v1/projects",
      withCookie(session, json("POST", { name: "semi" }, { "content-type": "application/json;" })),
    );
    expect(created.status).toBe(201);
    const patched = await api(
      `/v1/projects/${((await created.json()) as { id: string }).id}/encoding-settings`,
      withCookie(
        session,
        json("PATCH", { mp4FallbackEnabled: true }, { "content-type": "application/json ;charset=utf-8" }),
      ),
    );
    expect(patched.status).toBe(200);
    const email = `odd-${Date.now()}@example.com`;
    const signup = await api("/v1/auth/signup", {
      ...json("POST", { email, password: "correct horse battery" }, { "content-type": "APPLICATION/JSON;;" }),
      headers: { "content-type": "APPLICATION/JSON;;", "cf-connecting-ip": "192.0.2.45" },
    });
    expect(signup.status).toBe(201);
    const refused = await api(
      "/v1/projects",
      withCookie(session, json("POST", { name: "x" }, { "content-type": "application/vnd_x+json" })),
    );
    expect(refused.status).toBe(400);
  });
});

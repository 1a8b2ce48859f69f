import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { ROUTES } from "../../src/http/route";
import { spokenDuration } from "../../src/webhooks/docs";
import { DELIVERY_TIMEOUT_MS, RETRY_DELAYS_SECONDS } from "../../src/webhooks/model";
import { api } from "../helpers";

type Operation = {
  operationId?: string;
  description?: string;
  "x-api-key-scope"?: string;
  security?: Record<string, string[]>[];
  tags?: string[];
  responses: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  tags: { name: string }[];
  webhooks: Record<string, unknown>;
  components: { schemas: Record<string, unknown> };
};

/**
 * Served, but not operations of the API: its own description, playback and the embed page
 * (described by the Playback tag), the encoder's internal calls back, the static files, and the
 * dashboard's page (docs/dashboard.md: HTML for people, which speaks the documented /v1 operations).
 */
const NOT_OPERATIONS = ["GET /", "GET /docs", "GET /v1/openapi.json", "GET /dashboard", "GET /dashboard/*"];
const NOT_OPERATION_PREFIXES = ["/play/", "/embed/", "/internal/", "/vendor/"];

async function document(): Promise<Document> {
  return (await (await api("/v1/openapi.json")).json()) as Document;
}

describe("the OpenAPI document", () => {
  it("describes exactly the routes the app serves", async () => {
    const doc = await document();
    const served = createApp()
      .routes.filter((route) => route.method !== "ALL")
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`)
      .filter((route) => !NOT_OPERATIONS.includes(route.replace(/\{(\w+)\}/g, ":$1")))
      .filter((route) => !NOT_OPERATION_PREFIXES.some((prefix) => route.split(" ")[1]?.startsWith(prefix)));
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect([...new Set(served)].sort()).toEqual(documented.sort());
    expect(ROUTES.length).toBe(documented.length);
  });

  it("gives every operation an id, its security, a known tag, and its error codes as enums", async () => {
    const doc = await document();
    const tags = new Set(doc.tags.map((tag) => tag.name));
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
        ids.add(op.operationId ?? "");
        expect(Array.isArray(op.security), where).toBe(true);
        for (const tag of op.tags ?? []) expect(tags.has(tag), `${where}: ${tag}`).toBe(true);
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const error = response.content?.["application/json"]?.schema?.properties?.error as {
            properties: { code: { enum?: string[] } };
          };
          expect(error.properties.code.enum?.length, `${where} ${status}`).toBeGreaterThan(0);
        }
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).flatMap((methods) => Object.keys(methods)).length);
  });

  it("names the credential each operation takes", async () => {
    const doc = await document();
    // An API key's scope is not an OAuth scope: it is in x-api-key-scope (and the description), not in security.
    expect(doc.paths["/v1/videos/bulk"]?.post?.security).toEqual([{ apiKey: [] }, { sessionCookie: [] }]);
    expect(doc.paths["/v1/videos/bulk"]?.post?.["x-api-key-scope"]).toBe("write");
    expect(doc.paths["/v1/videos/bulk"]?.post?.description).toContain("**Auth:** an API key with `write` scope");
    expect(doc.paths["/v1/videos/{id}"]?.get?.security).toEqual([{ apiKey: [] }, { sessionCookie: [] }]);
    expect(doc.paths["/v1/videos/{id}"]?.get?.["x-api-key-scope"]).toBe("read");
    expect(doc.paths["/v1/projects/{projectId}/encoding-settings"]?.patch?.security).toEqual([{ sessionCookie: [] }]);
    expect(doc.paths["/v1/admin/accounts/{accountId}/approve"]?.post?.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths["/v1/auth/login"]?.post?.security).toEqual([]);
  });

  it("describes every event type's webhook with its payload", async () => {
    const doc = await document();
    expect(Object.keys(doc.webhooks)).toEqual([
      "video.deleted",
      "video.playable",
      "video.ready",
      "video.errored",
      "video.captions.ready",
      "video.captions.errored",
    ]);
    for (const schema of [
      "VideoDeletedEvent",
      "VideoPlayableEvent",
      "VideoReadyEvent",
      "VideoErroredEvent",
      "VideoCaptionsReadyEvent",
      "VideoCaptionsErroredEvent",
    ]) {
      expect(doc.components.schemas).toHaveProperty(schema);
    }
  });

  it("states delivery's timeout and retry waits from the constants delivery runs by", async () => {
    const doc = (await document()) as Document & { webhooks: Record<string, { post: { description: string } }> };
    const waits = RETRY_DELAYS_SECONDS.map(spokenDuration);
    expect(waits).toEqual(["5 s", "5 min", "30 min", "2 h", "5 h", "10 h", "10 h"]);
    for (const entry of Object.values(doc.webhooks)) {
      expect(entry.post.description).toContain(`Answer 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s;`);
      expect(entry.post.description).toContain(`retried after ${waits.slice(0, -1).join(", ")} and ${waits.at(-1)}.`);
    }
  });

  it("shows test mode: livemode on every object that has a mode, ?mode=, going live", async () => {
    const doc = (await document()) as Document & {
      info: { description: string };
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; in: string; schema?: { enum?: string[] } }[] }>
      >;
      components: { schemas: Record<string, { properties?: Record<string, { type?: string }>; required?: string[] }> };
    };
    for (const name of ["Video", "WebhookEndpoint", "DirectUpload", "DirectUploadProgress"]) {
      const schema = doc.components.schemas[name];
      expect(schema?.properties?.livemode?.type, name).toBe("boolean");
      expect(schema?.required, name).toContain("livemode");
    }
    let modeOperations = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const takesKey = ((op as Operation).security ?? []).some((requirement) => "apiKey" in requirement);
        const mode = op.parameters?.find((parameter) => parameter.in === "query" && parameter.name === "mode");
        expect(Boolean(mode), `${method.toUpperCase()} ${path}`).toBe(takesKey);
        if (mode) expect(mode.schema?.enum).toEqual(["live", "test"]);
        if (mode) modeOperations += 1;
      }
    }
    expect(modeOperations).toBeGreaterThanOrEqual(21);
    expect(doc.info.description).toContain("## Test mode");
    expect(doc.info.description).toContain("**Moving from test to live.**");
  });

  it("points to the docs from the root", async () => {
    const response = await api("/");
    expect(await response.json()).toMatchObject({ docs: "/docs", openapi: "/v1/openapi.json" });
  });
});

import type { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { ROUTES, SELF_READ_BODIES } from "../../src/http/route";
import { VideoDeletedEventSchema } from "../../src/videos/events";
import { api } from "../helpers";

type Media = { schema?: { $ref?: string; contentMediaType?: string; format?: string }; example?: unknown };
type Body = { content?: Record<string, Media>; headers?: Record<string, { $ref?: string }> };
type Operation = { requestBody?: Body; responses: Record<string, Body>; parameters?: { name: string; in: string }[] };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, unknown> };
};
type ZodBody = { content?: Record<string, { schema?: z.ZodType }> };

async function document(): Promise<Document> {
  return (await (await api("/v1/openapi.json")).json()) as Document;
}

/** What the document shows for a route, and the zod schemas the route validates and answers with. */
async function pairs() {
  const doc = await document();
  return ROUTES.map((config) => {
    const operation = doc.paths[config.path]?.[config.method];
    if (!operation) throw new Error(`${config.method} ${config.path} is not in the document`);
    return { where: `${config.method.toUpperCase()} ${config.path}`, config, operation };
  });
}

function expectValid(schema: z.ZodType, example: unknown, where: string) {
  const result = schema.safeParse(example);
  expect(result.success, `${where}: ${JSON.stringify(example)}\n${JSON.stringify(result.error?.issues)}`).toBe(true);
}

describe("the OpenAPI document's examples", () => {
  it("gives every JSON request and response body, webhooks included, an example", async () => {
    const doc = await document();
    const operations = [...Object.values(doc.paths), ...Object.values(doc.webhooks)].flatMap((item) =>
      Object.entries(item),
    );
    let bodies = 0;
    for (const [method, operation] of operations) {
      const all = [operation.requestBody, ...Object.values(operation.responses)];
      for (const media of all.flatMap((body) => Object.values(body?.content ?? {}))) {
        if (media.schema?.format === "binary") continue;
        bodies++;
        expect(media.example, `${method} ${JSON.stringify(media.schema)}`).toBeDefined();
      }
    }
    expect(bodies).toBeGreaterThan(100);
  });

  it("makes every request body's example one the route accepts", async () => {
    for (const { where, config, operation } of await pairs()) {
      const declared = (config.request?.body as ZodBody | undefined)?.content?.["application/json"]?.schema;
      // A body the route reads itself is documented by reference to its schema's component.
      const ref = (declared as { $ref?: string } | undefined)?.$ref;
      const schema = ref ? SELF_READ_BODIES.get(ref.split("/").at(-1) ?? "") : declared;
      if (!schema) continue;
      expectValid(schema, operation.requestBody?.content?.["application/json"]?.example, where);
    }
  });

  it("makes every response body's example one its schema describes", async () => {
    let checked = 0;
    for (const { where, config, operation } of await pairs()) {
      for (const [status, response] of Object.entries(config.responses)) {
        const schema = (response as ZodBody).content?.["application/json"]?.schema;
        if (!schema) continue;
        expectValid(schema, operation.responses[status]?.content?.["application/json"]?.example, `${where} ${status}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(ROUTES.length * 3);
  });

  it("makes the webhook's example an event its schema describes", async () => {
    const doc = await document();
    const example = doc.webhooks["video.deleted"]?.post?.requestBody?.content?.["application/json"]?.example;
    expectValid(VideoDeletedEventSchema, example, "video.deleted");
  });
});

describe("the OpenAPI document's headers", () => {
  it("declares x-request-id on every response, and Cache-Control and x-d1-bookmark on every /v1 one", async () => {
    let v1 = 0;
    for (const { where, config, operation } of await pairs()) {
      const isV1 = config.path.startsWith("/v1/");
      v1 += isV1 ? 1 : 0;
      const expected = isV1 ? ["x-request-id", "Cache-Control", "x-d1-bookmark"] : ["x-request-id"];
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(Object.keys(response.headers ?? {}), `${where} ${status}`).toEqual(expect.arrayContaining(expected));
      }
      const bookmark = operation.parameters?.find((p) => p.name === "x-d1-bookmark");
      expect(bookmark?.in, where).toBe(isV1 ? "header" : undefined);
    }
    expect(v1).toBeGreaterThan(30);
  });

  it("declares a 500 internal_error on every operation", async () => {
    for (const { where, operation } of await pairs()) expect(operation.responses["500"], where).toBeDefined();
  });

  it("declares RateLimit headers on rate-limited routes, Retry-After with 429, Idempotent-Replayed on POSTs", async () => {
    const doc = await document();
    const bulk = doc.paths["/v1/videos/bulk"]?.post;
    expect(Object.keys(bulk?.responses["200"]?.headers ?? {})).toEqual(
      expect.arrayContaining(["RateLimit", "RateLimit-Policy", "Idempotent-Replayed"]),
    );
    expect(Object.keys(bulk?.responses["429"]?.headers ?? {})).toContain("Retry-After");
    const settings = doc.paths["/v1/projects/{projectId}/encoding-settings"];
    expect(Object.keys(settings?.get?.responses["200"]?.headers ?? {})).toContain("ETag");
    expect(settings?.patch?.parameters?.map((p) => p.name)).toContain("if-match");
    // Every header a response refers to is defined once.
    for (const { operation } of await pairs()) {
      for (const response of Object.values(operation.responses)) {
        for (const header of Object.values(response.headers ?? {})) {
          expect(doc.components.headers).toHaveProperty(header.$ref?.split("/").pop() ?? "");
        }
      }
    }
  });

  it("declares the public thumbnail's validators, conditional headers and 304", async () => {
    const doc = await document();
    const thumbnail = doc.paths["/thumbnails/{projectId}/{videoId}/{file}"]?.get;
    expect(thumbnail?.parameters?.filter((p) => p.in === "header").map((p) => p.name)).toEqual(
      expect.arrayContaining(["if-none-match", "if-match", "if-modified-since", "if-unmodified-since"]),
    );
    for (const status of ["200", "304"]) {
      expect(Object.keys(thumbnail?.responses[status]?.headers ?? {})).toEqual(
        expect.arrayContaining(["ETag", "Last-Modified", "Cache-Control"]),
      );
    }
    expect(thumbnail?.responses["412"]).toBeDefined();
  });

  it("types raw-bytes bodies with their media type", async () => {
    const doc = await document();
    const thumbnail = doc.paths["/v1/videos/{id}/thumbnail"]?.put?.requestBody?.content ?? {};
    expect(Object.keys(thumbnail).sort()).toEqual(["image/jpeg", "image/png", "image/webp"]);
    for (const [type, media] of Object.entries(thumbnail)) expect(media.schema?.contentMediaType).toBe(type);
  });
});

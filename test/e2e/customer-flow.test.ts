import { readFileSync } from "node:fs";
import path from "node:path";
import createClient, { type Middleware } from "openapi-fetch";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../../api-client/api.d.ts";
import { stripMetadata } from "../../src/images/strip.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, E2E_ADMIN_TOKEN, startDevServer } from "./server.ts";

/**
 * A whole integration through a client generated from the OpenAPI document (openapi-typescript +
 * openapi-fetch), so the document is proved usable by a real typed client.
 */
let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startDevServer();
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

/** A cookie jar and a client address of its own, as a browser behind one address would have. */
function jar(): Middleware {
  let cookie: string | undefined;
  const ip = `10.11.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  return {
    onRequest({ request }) {
      request.headers.set("cf-connecting-ip", ip);
      if (cookie) request.headers.set("cookie", cookie);
      return request;
    },
    onResponse({ response }) {
      const set = response.headers.get("set-cookie");
      if (set?.startsWith("svc_session=")) cookie = set.split(";")[0];
      return response;
    },
  };
}

/** A raw body, typed as the document types one (a Blob): the serializer hands it to fetch as it is, not as JSON. */
const binary = (bytes: Uint8Array<ArrayBuffer>) => ({
  body: new Blob([bytes]),
  bodySerializer: (body: Blob) => body,
});

describe("a customer integration through the generated client", () => {
  it("signs up, gets approved, uploads a video, sets a thumbnail, runs bulk actions and receives a verified webhook", async () => {
    const dashboard = createClient<paths>({ baseUrl: server.baseUrl });
    dashboard.use(jar());
    const email = `flow-${Date.now()}@example.com`;
    const password = "a long password";

    const signup = await dashboard.POST("/v1/auth/signup", { body: { email, password } });
    expect(signup.response.status).toBe(201);
    const accountId = signup.data?.id ?? "";
    const operator = createClient<paths>({
      baseUrl: server.baseUrl,
      headers: { authorization: `Bearer ${E2E_ADMIN_TOKEN}` },
    });
    const approved = await operator.POST("/v1/admin/accounts/{accountId}/approve", { params: { path: { accountId } } });
    expect(approved.data?.approved).toBe(true);
    const login = await dashboard.POST("/v1/auth/login", { body: { email, password } });
    expect(login.data?.email).toBe(email);

    const project = await dashboard.POST("/v1/projects", { body: { name: "Launch" } });
    expect(project.response.status).toBe(201);
    const projectId = project.data?.id ?? "";
    const created = await dashboard.POST("/v1/projects/{projectId}/api-keys", {
      params: { path: { projectId } },
      body: { name: "server", scopes: ["read", "write"], mode: "test" },
    });
    const key = created.data?.key ?? "";
    expect(key).toMatch(/^svc_test_/);

    const client = createClient<paths>({ baseUrl: server.baseUrl, headers: { authorization: `Bearer ${key}` } });
    const video = await client.POST("/v1/videos", { body: { title: "Intro" } });
    expect(video.response.status).toBe(201);
    const videoId = video.data?.video.id ?? "";
    const part = await client.PUT("/v1/videos/{id}/upload/parts/{partNumber}", {
      params: { path: { id: videoId, partNumber: 1 } },
      headers: { "content-type": "application/octet-stream" },
      ...binary(new TextEncoder().encode("a tiny source, one part")),
    });
    expect(part.data?.partNumber).toBe(1);
    const completed = await client.POST("/v1/videos/{id}/upload/complete", {
      params: { path: { id: videoId } },
      body: { parts: [{ partNumber: 1, etag: part.data?.etag ?? "" }] },
    });
    expect(completed.data?.status).toBe("uploaded");

    const png = new Uint8Array(readFileSync(path.join(import.meta.dirname, "../fixtures/images/rgb.png")));
    const thumbnail = await client.PUT("/v1/videos/{id}/thumbnail", {
      params: { path: { id: videoId } },
      headers: { "content-type": "image/png" },
      ...binary(png),
    });
    expect(thumbnail.data?.source).toBe("custom");
    const image = await fetch(thumbnail.data?.thumbnailUrl ?? "");
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(stripMetadata(png, "image/png"));

    const settings = await dashboard.PATCH("/v1/projects/{projectId}/encoding-settings", {
      params: { path: { projectId } },
      body: { enabledResolutions: ["1080p", "720p"], watermark: { position: "bottom-left" } },
    });
    expect(settings.data?.enabledResolutions).toEqual(["720p", "1080p"]);

    const endpoint = await client.POST("/v1/projects/{projectId}/webhook-endpoints", {
      params: { path: { projectId } },
      // Deletions only: the tiny source is no video, so it also gets a video.errored of its own.
      body: { url: receiver.url("/hooks"), eventTypes: ["video.deleted"] },
    });
    expect(endpoint.response.status).toBe(201);

    const other = await client.POST("/v1/videos", { body: {} });
    const ids = [videoId, other.data?.video.id ?? ""];
    const hidden = await client.POST("/v1/videos/bulk", {
      body: { action: "set_visibility", videoIds: ids, visibility: "private" },
    });
    expect(hidden.data?.results.every((result) => result.ok)).toBe(true);
    const deleted = await client.POST("/v1/videos/bulk", { body: { action: "delete", videoIds: ids } });
    expect(deleted.data?.results.map((result) => result.ok)).toEqual([true, true]);
    const gone = await client.GET("/v1/videos/{id}", { params: { path: { id: videoId } } });
    expect(gone.error?.error.code).toBe("video_not_found");

    const deadline = Date.now() + 30_000;
    while (receiver.received.length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(receiver.received).toHaveLength(2);
    const verifier = new Webhook((endpoint.data?.secret ?? "").slice("whsec_".length));
    const events = receiver.received.map(({ headers, body }) =>
      verifier.verify(body, {
        "webhook-id": String(headers["webhook-id"]),
        "webhook-timestamp": String(headers["webhook-timestamp"]),
        "webhook-signature": String(headers["webhook-signature"]),
      }),
    ) as { type: string; data: { id: string; projectId: string } }[];
    expect(events.map((event) => event.data.id).sort()).toEqual([...ids].sort());
    expect(events.every((event) => event.type === "video.deleted" && event.data.projectId === projectId)).toBe(true);

    const page = await client.GET("/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries", {
      params: { path: { projectId, id: endpoint.data?.id ?? "" }, query: { limit: 10 } },
    });
    expect(page.data?.data.length).toBeGreaterThanOrEqual(2);
    expect(page.response.headers.get("x-d1-bookmark")).toBeTruthy();
  });
});

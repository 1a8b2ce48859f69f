import { request } from "node:http";
import * as tus from "tus-js-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { type DevServer, startDevServer } from "./server.ts";
import { bodyOf, bytesOf, sha256, startCuttingProxy, storedSource } from "./tus-support.ts";

/**
 * Direct uploads (docs/api-guide.md#direct-uploads-from-a-browser-tus) over real HTTP:
 * tus-js-client in Node against `wrangler dev`, its PATCHes cut off mid-body and resumed, and the
 * source R2 holds compared byte for byte.
 */
let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;

beforeAll(async () => {
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "tus" });
});
afterAll(async () => {
  await server?.stop();
});

type DirectUpload = { id: string; url: string; expiresAt: string; video: { id: string } };

async function newUpload(body: Record<string, unknown> = {}): Promise<DirectUpload> {
  const created = await tenant.call("POST", "/v1/uploads", body);
  expect(created.status, created.text).toBe(201);
  return created.json as DirectUpload;
}

/** One tus-js-client upload to its end (or its error), with every request it made. */
function upload(file: Buffer, url: string, options: Partial<tus.UploadOptions> = {}) {
  const requests: { method: string; offset: string | null; status: number }[] = [];
  let instance: tus.Upload | undefined;
  const done = new Promise<void>((resolve, reject) => {
    instance = new tus.Upload(file, {
      endpoint: url,
      retryDelays: [],
      metadata: { filename: "source.bin" },
      onAfterResponse: (request, response) => {
        requests.push({
          method: request.getMethod(),
          offset: response.getHeader("Upload-Offset") ?? null,
          status: response.getStatus(),
        });
      },
      onSuccess: () => resolve(),
      onError: (error) => reject(error),
      ...options,
    });
  });
  (instance as tus.Upload).start();
  return { upload: instance as tus.Upload, done, requests };
}

describe("tus-js-client in Node", () => {
  it("uploads in small chunks, cut off mid-PATCH and resumed from HEAD, and R2 holds exactly the bytes", async () => {
    // Through a proxy that drops the connection in the middle of a PATCH's body.
    const proxy = await startCuttingProxy(server.baseUrl);
    try {
      // Minted through the proxy, so the URL (and the Location it gives) are the proxy's.
      const viaProxy = await keyedTenant(proxy.baseUrl, { name: "tus via proxy" });
      const created = await viaProxy.call("POST", "/v1/uploads", { video: { title: "resumed" } });
      const { id, video, url } = created.json as DirectUpload;
      expect(url.startsWith(proxy.baseUrl)).toBe(true);
      const source = bytesOf(21 * 1024 * 1024 + 4321);
      const chunkSize = 3 * 1024 * 1024 + 1;
      let cutArmed = false;
      const attempt = upload(source, url, {
        chunkSize,
        // tus-js-client's own recovery: after a network error, HEAD, then PATCH from that offset.
        retryDelays: [0, 200, 500],
        onChunkComplete: (_chunk, sent) => {
          // After two chunks, the third PATCH (which ends past the first 8 MiB part) dies 2 MB in.
          if (sent === 2 * chunkSize && !cutArmed) {
            cutArmed = true;
            proxy.cutNextPatch(2_000_000);
          }
        },
      });
      await attempt.done;
      expect(proxy.cuts()).toBe(1);
      const methods = attempt.requests.map((r) => r.method);
      const head = attempt.requests.find((r) => r.method === "HEAD");
      expect(methods.slice(0, 3)).toEqual(["POST", "PATCH", "PATCH"]);
      expect(head).toBeDefined();
      const resumedFrom = Number(head?.offset);
      // The two whole PATCHes are kept; of the cut one, what reached the upload's object (workerd may
      // drop what was still in transit when the client went away: the server chooses the boundary).
      expect(resumedFrom).toBeGreaterThanOrEqual(2 * chunkSize);
      expect(resumedFrom).toBeLessThan(2 * chunkSize + 2_000_000);
      console.log(`cut off 2,000,000 bytes into the third PATCH; HEAD said resume from ${resumedFrom}`);

      const status = await viaProxy.call("GET", `/v1/videos/${video.id}`);
      // Uploaded, and on to encoding (random bytes: errored invalid_source soon after).
      expect(["uploaded", "processing", "errored"]).toContain(status.json.status);
      const progress = await viaProxy.call("GET", `/v1/uploads/${id}`);
      expect(progress.json).toMatchObject({ status: "completed", offset: source.length, length: source.length });
      const stored = await storedSource(server.persistTo, viaProxy.projectId, video.id);
      expect(stored.length).toBe(source.length);
      expect(sha256(stored)).toBe(sha256(source));
    } finally {
      await proxy.close();
    }
  });

  it("refuses an upload past the URL's maxSizeBytes with 413", async () => {
    const { url, id } = await newUpload({ maxSizeBytes: 1000 });
    const attempt = upload(bytesOf(1001), url);
    const error = await attempt.done.then(
      () => null,
      (e: tus.DetailedError) => e,
    );
    expect(error?.originalResponse?.getStatus()).toBe(413);
    expect((await tenant.call("GET", `/v1/uploads/${id}`)).json).toMatchObject({ status: "waiting", length: null });
    // Exactly the limit is fine.
    const fits = await newUpload({ maxSizeBytes: 1000 });
    await upload(bytesOf(1000), fits.url).done;
  });

  it("terminates an upload: 204, its video is deleted and the upload answers 404", async () => {
    const { url, video } = await newUpload();
    const started = upload(bytesOf(100_000), url, {
      chunkSize: 10_000,
      onChunkComplete: (_chunk, sent) => {
        if (sent >= 30_000) started.upload.abort().catch(() => {});
      },
    });
    started.done.catch(() => {});
    for (let waited = 0; !started.upload.url && waited < 10_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const uploadUrl = started.upload.url as string;
    await tus.Upload.terminate(uploadUrl, { retryDelays: [] });
    expect((await tenant.call("GET", `/v1/videos/${video.id}`)).status).toBe(404);
    const head = await fetch(uploadUrl, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } });
    expect(head.status).toBe(404);
  });

  it("takes a PATCH of exactly 64 MiB through wrangler dev, and refuses one byte more with 413", async () => {
    // 64 MiB is under Cloudflare's own request body limit (100 MB on every plan); the object holds
    // at most two 8 MiB parts of it in memory at a time.
    const { url, video } = await newUpload();
    const limit = 64 * 1024 * 1024;
    const source = bytesOf(limit + 1, 11);
    const created = await fetch(url, {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": String(source.length) },
    });
    const location = created.headers.get("location") as string;
    const headers = { "tus-resumable": "1.0.0", "content-type": "application/offset+octet-stream" };
    // Refused from its declared length, before a byte of it is read: the answer comes while the
    // client could still be sending, so only the headers are sent here (a client streaming the body
    // may see the connection closed under it once the 413 is out).
    const over = await new Promise<number>((resolve, reject) => {
      const sent = request(location, {
        method: "PATCH",
        headers: { ...headers, "upload-offset": "0", "content-length": String(limit + 1) },
      });
      sent.on("response", (response) => {
        resolve(response.statusCode ?? 0);
        response.resume();
        sent.destroy();
      });
      sent.on("error", reject);
      sent.flushHeaders();
    });
    expect(over).toBe(413);
    const whole = await fetch(location, {
      method: "PATCH",
      headers: { ...headers, "upload-offset": "0" },
      body: bodyOf(source.subarray(0, limit)),
    });
    expect(whole.status).toBe(204);
    expect(whole.headers.get("upload-offset")).toBe(String(limit));
    const last = await fetch(location, {
      method: "PATCH",
      headers: { ...headers, "upload-offset": String(limit) },
      body: bodyOf(source.subarray(limit)),
    });
    expect(last.status).toBe(204);
    expect(["uploaded", "processing", "errored"]).toContain(
      (await tenant.call("GET", `/v1/videos/${video.id}`)).json.status,
    );
    expect(sha256(await storedSource(server.persistTo, tenant.projectId, video.id))).toBe(sha256(source));
  });

  it("answers the documented tus errors over HTTP, plain, with Tus-Resumable", async () => {
    const { url } = await newUpload({ maxSizeBytes: 50 });
    const send = (target: string, method: string, headers: Record<string, string>, body?: string) =>
      fetch(target, { method, headers, body });
    const V = { "tus-resumable": "1.0.0" };
    const expectTus = async (response: Response, status: number) => {
      expect(response.status).toBe(status);
      expect(response.headers.get("tus-resumable")).toBe("1.0.0");
      expect(await response.text()).toBe("");
    };
    await expectTus(await send(url, "POST", { "upload-length": "5" }), 412);
    await expectTus(await send(url, "POST", { ...V, "upload-length": "51" }), 413);
    const created = await send(url, "POST", { ...V, "upload-length": "10" });
    await expectTus(created, 201);
    const location = created.headers.get("location") as string;
    const octets = { ...V, "content-type": "application/offset+octet-stream" };
    await expectTus(
      await send(location, "PATCH", { ...V, "upload-offset": "0", "content-type": "text/plain" }, "a"),
      415,
    );
    await expectTus(await send(location, "PATCH", { ...octets, "upload-offset": "4" }, "a"), 409);
    await expectTus(await send(location, "PATCH", { ...octets, "upload-offset": "0" }, "01234567890"), 413);
    await expectTus(await send(`${url.slice(0, -2)}xx/source`, "HEAD", V), 404);
    await expectTus(await send(location, "PATCH", { ...octets, "upload-offset": "0" }, "0123456789"), 204);
    const head = await send(location, "HEAD", V);
    expect(head.headers.get("upload-offset")).toBe("10");
    expect(head.headers.get("cache-control")).toBe("no-store");
  });
});

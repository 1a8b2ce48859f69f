import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runImport } from "../../src/imports/run";
import { sweepImports } from "../../src/imports/sweeper";
import type { ImportMessage } from "../../src/queues/imports";
import { patternedBytes } from "../fixtures/bytes";
import { api, bearer, json, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { runQueue } from "../support/handlers";
import {
  capturingQueue,
  eventsOf,
  expectFailed,
  expectSameBytes,
  fakeOrigin,
  file,
  importOf,
  MiB,
  newImport,
  partsOf,
  redirect,
  rowOf,
  sourceBytes,
  testDeps,
  URL_A,
} from "./support";

describe("POST /v1/videos with sourceUrl", () => {
  it("answers 201 with the video importing and no upload, and queues its fetch", async () => {
    const { key } = await newWorkspace();
    const { response, sent } = await newImport(key, URL_A, { title: "Imported", tags: ["a"] });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { video: { id: string; status: string; title: string }; upload?: unknown };
    expect(body.upload).toBeUndefined();
    expect(body.video.status).toBe("importing");
    expect(body.video.title).toBe("Imported");
    expect(sent).toEqual([{ projectId: expect.any(String), videoId: body.video.id }]);
    const row = await env.DB.prepare("SELECT import_url, upload_r2_id, upload_id FROM videos WHERE id = ?")
      .bind(body.video.id)
      .first();
    expect(row).toEqual({ import_url: URL_A, upload_r2_id: null, upload_id: null });
    const read = await api(`/v1/videos/${body.video.id}`, bearer(key));
    expect(((await read.json()) as { status: string }).status).toBe("importing");
  });

  it.each([
    "https://10.0.0.8/a.mp4",
    "https://[::ffff:169.254.169.254]/latest",
    "https://localhost/a.mp4",
    "https://metadata.internal/a.mp4",
    "http://media.example.com/a.mp4",
    "ftp://media.example.com/a.mp4",
    "file:///etc/passwd",
    "not a url",
  ])("refuses %s with invalid_body naming sourceUrl, and records nothing", async (url) => {
    const { key, project } = await newWorkspace();
    const { response, sent } = await newImport(key, url);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("invalid_body");
    expect(body.error.details.map((detail) => detail.path)).toEqual(["sourceUrl"]);
    expect(sent).toEqual([]);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM videos WHERE project_id = ?")
      .bind(project.id)
      .first<number>("n");
    expect(count).toBe(0);
  });

  it.each([
    "https://metadata.google.internal../a.mp4",
    "https://printer.local../a.mp4",
    "https://intranet../a.mp4",
    "http://localhost../a.mp4",
    "https://media..example.com/a.mp4",
  ])("refuses the name with an empty label %s, in local development too", async (url) => {
    const { key } = await newWorkspace();
    for (const rules of [{}, { ALLOW_HTTP_WEBHOOKS: "true" }]) {
      const { sent, queue } = capturingQueue<ImportMessage>();
      const request = bearer(key, json("POST", { sourceUrl: url }));
      const response = await apiWith({ IMPORT_QUEUE: queue, ...rules }, "/v1/videos", request);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
      expect(body.error.code).toBe("invalid_body");
      expect(body.error.details.map((detail) => detail.path)).toEqual(["sourceUrl"]);
      expect(sent).toEqual([]);
    }
  });

  // The URL parser drops tabs and line breaks silently: the URL stored would not be the one sent.
  it.each([
    ["a tab", "https://media.example.com/a\t.mp4"],
    ["a line break", "https://media.exa\nmple.com/a.mp4"],
    ["a carriage return", "https://media.example.com/\r\na.mp4"],
    ["NUL", "https://media.example.com/a.mp4\u0000"],
    ["a lone surrogate", "https://media.example.com/\ud800.mp4"],
  ])("refuses a sourceUrl holding %s with invalid_body naming sourceUrl", async (_, url) => {
    const { key } = await newWorkspace();
    const { response, sent } = await newImport(key, url);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("invalid_body");
    expect(body.error.details.map((detail) => detail.path)).toEqual(["sourceUrl"]);
    expect(sent).toEqual([]);
  });

  it("imports in test mode as it uploads: a test video, importing", async () => {
    const { key } = await newWorkspace({ mode: "test" });
    const { response } = await newImport(key, URL_A);
    expect(response.status).toBe(201);
    const { video } = (await response.json()) as { video: { livemode: boolean; status: string } };
    expect(video).toMatchObject({ livemode: false, status: "importing" });
  });
});

describe("an import's run", () => {
  it.each([
    ["a byte stream (read by BYOB)", true],
    ["a stream of chunks (copied)", false],
  ])(
    "stores %s in parts of one size, completes it, and the video becomes uploaded with its encoding queued",
    async (_, byteStream) => {
      // The two ways of reading are both taken: only a byte stream has a BYOB reader.
      const answer = (await file(new Uint8Array(1), { byteStream })(new Request(URL_A), 1)) as Response;
      let byob = true;
      try {
        answer.body?.getReader({ mode: "byob" });
      } catch {
        byob = false;
      }
      expect(byob).toBe(byteStream);
      const { id } = await importOf();
      const bytes = patternedBytes(12 * MiB + 123);
      const origin = fakeOrigin({ [URL_A]: file(bytes, { byteStream }) });
      const { deps, encodes } = testDeps(origin.fetch);
      expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
      const row = await rowOf(id);
      expect(row.status).toBe("uploaded");
      expect(row.upload_r2_id).toBeNull();
      expect(JSON.parse(row.completed_parts ?? "[]")).toHaveLength(3);
      expect(await partsOf(id)).toEqual([5 * MiB, 5 * MiB, 2 * MiB + 123]);
      expectSameBytes(await sourceBytes(row.source_key), bytes);
      expect(encodes).toEqual([{ projectId: expect.any(String), videoId: id }]);
      expect(origin.hits).toEqual([{ url: URL_A, range: null, ifRange: null, redirect: "manual" }]);
      // A second message finds nothing to do.
      expect(await runImport(deps, id)).toEqual({ kind: "skipped" });
    },
  );

  it("follows redirects, each checked again", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(3 * MiB);
    const origin = fakeOrigin({
      [URL_A]: redirect("/b.mp4", 301),
      "https://media.example.com/b.mp4": redirect("https://cdn.example.net/c.mp4", 307),
      "https://cdn.example.net/c.mp4": file(bytes),
    });
    const { deps } = testDeps(origin.fetch);
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits.map((hit) => hit.url)).toEqual([
      URL_A,
      "https://media.example.com/b.mp4",
      "https://cdn.example.net/c.mp4",
    ]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("fails a redirect to a refused address without asking it, with video.errored", async () => {
    const { id } = await importOf();
    const origin = fakeOrigin({ [URL_A]: redirect("https://169.254.169.254/latest/meta-data") });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    expect(origin.hits.map((hit) => hit.url)).toEqual([URL_A]);
    await expectFailed(id, /redirect .*public address/);
  });

  it("fails after more than 5 redirects", async () => {
    const { id } = await importOf();
    const hops = Object.fromEntries(
      Array.from({ length: 7 }, (_, i) => [
        i === 0 ? URL_A : `https://media.example.com/${i}`,
        redirect(`https://media.example.com/${i + 1}`),
      ]),
    );
    const origin = fakeOrigin(hops);
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    expect(origin.hits).toHaveLength(6);
    await expectFailed(id, "more than 5 redirects");
  });

  it("fails an answer other than 2xx, saying the origin's status, and aborts the multipart upload", async () => {
    const { id } = await importOf();
    const origin = fakeOrigin({});
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    const row = await expectFailed(id, "the origin answered 404 Not Found");
    const multipart = env.MEDIA.resumeMultipartUpload(row.source_key, row.upload_r2_id as string);
    await expect(multipart.uploadPart(1, "x")).rejects.toThrow();
  });

  it("bounds its messages: the origin's status code and at most 100 characters of its reason, 500 in all", async () => {
    const { id } = await importOf();
    const reason = `Gone ${"x".repeat(60_000)}`;
    const origin = fakeOrigin({ [URL_A]: () => new Response("gone", { status: 410, statusText: reason }) });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    const row = await expectFailed(id, /^The import failed: the origin answered 410 Gone x+…\.$/);
    const message = row.error_message as string;
    expect(message.length).toBeLessThanOrEqual(500);
    expect(message.slice("The import failed: the origin answered 410 ".length, -1)).toHaveLength(100);
    const [event] = await eventsOf(id);
    const payload = JSON.parse(event?.payload ?? "{}") as { data: { error: { message: string } } };
    expect(payload.data.error.message).toBe(message);
  });

  it("bounds what it quotes of a redirect's target", async () => {
    const { id } = await importOf();
    const location = `https://10.0.0.1/${"a".repeat(60_000)}`;
    const origin = fakeOrigin({ [URL_A]: redirect(location) });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    const row = await expectFailed(id, /^The import failed: a redirect .*: https:\/\/10\.0\.0\.1\/a+…\.$/);
    expect((row.error_message as string).length).toBeLessThanOrEqual(500);
  });

  it("resumes by Range after a body that broke half-way, and assembles the same bytes", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(12 * MiB);
    const origin = fakeOrigin({ [URL_A]: file(bytes, { etag: '"e1"', breakAt: { hits: [1], at: 7 * MiB } }) });
    const { deps } = testDeps(origin.fetch);
    expect(await runImport(deps, id)).toEqual({ kind: "retry", delaySeconds: 1 });
    let row = await rowOf(id);
    expect(row).toMatchObject({ status: "importing", import_failures: 1, import_validator: '"e1"' });
    expect(await partsOf(id)).toEqual([5 * MiB]);
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits[1]).toMatchObject({ range: `bytes=${5 * MiB}-`, ifRange: '"e1"' });
    row = await rowOf(id);
    expect(row.status).toBe("uploaded");
    expect(await partsOf(id)).toEqual([5 * MiB, 5 * MiB, 2 * MiB]);
    expectSameBytes(await sourceBytes(row.source_key), bytes);
  });

  it("starts again from the first part when the server ignores Range", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    const origin = fakeOrigin({ [URL_A]: file(bytes, { ranges: false, breakAt: { hits: [1], at: 6 * MiB } }) });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("retry");
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits[1]?.range).toBe(`bytes=${5 * MiB}-`);
    expect(await partsOf(id)).toEqual([5 * MiB, 5 * MiB, MiB]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("fails 'too large' from Content-Length without reading, and from the bytes counted without it", async () => {
    const declared = await importOf();
    const bytes = patternedBytes(6 * MiB);
    const one = testDeps(fakeOrigin({ [URL_A]: file(bytes) }).fetch, { maxBytes: 5 * MiB + 1 });
    expect((await runImport(one.deps, declared.id)).kind).toBe("failed");
    await expectFailed(declared.id, "too large");
    expect(await partsOf(declared.id)).toEqual([]);

    const counted = await importOf();
    const two = testDeps(fakeOrigin({ [URL_A]: file(bytes, { length: false }) }).fetch, { maxBytes: 5 * MiB + 1 });
    expect((await runImport(two.deps, counted.id)).kind).toBe("failed");
    await expectFailed(counted.id, "too large");
  });

  it("fails for good when nothing arrives for the pace's window", async () => {
    const { id } = await importOf();
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(8 * MiB), { stallAt: 2 * MiB }) });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    await expectFailed(id, "nothing received for 0.3 s");
  });

  it("fails an empty file", async () => {
    const { id } = await importOf();
    const { deps } = testDeps(fakeOrigin({ [URL_A]: file(new Uint8Array(0)) }).fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    await expectFailed(id, "empty");
  });

  it("fails for good at the third transient failure", async () => {
    const { id } = await importOf();
    let calls = 0;
    const failing = (async () => {
      calls++;
      throw new TypeError("Network connection lost.");
    }) as typeof fetch;
    const { deps } = testDeps(failing);
    expect((await runImport(deps, id)).kind).toBe("retry");
    expect((await runImport(deps, id)).kind).toBe("retry");
    expect((await runImport(deps, id)).kind).toBe("failed");
    expect(calls).toBe(3);
    const row = await expectFailed(id, "3 transient failures, the last: the connection to the origin failed");
    // The runtime's own words stay in the logs.
    expect(row.error_message).not.toContain("Network connection lost");
  });

  it("stops at a part boundary when it stored its parts' worth, and the next run goes on from there", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    const origin = fakeOrigin({ [URL_A]: file(bytes) });
    const { deps } = testDeps(origin.fetch, { partsPerRun: 1 });
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    expect(await partsOf(id)).toEqual([5 * MiB]);
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${5 * MiB}-`, `bytes=${10 * MiB}-`]);
    expect((await rowOf(id)).import_failures).toBe(0);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("runs one fetch at a time, and stops for a video deleted meanwhile", async () => {
    const { key, id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    let deleted = false;
    const origin = fakeOrigin({ [URL_A]: file(bytes) });
    const { deps } = testDeps(origin.fetch, { sliceMs: 60_000 });
    // The delete lands while the first part is on its way.
    const media = deps.media;
    deps.media = {
      ...media,
      createMultipartUpload: (k: string) => media.createMultipartUpload(k),
      head: (k: string) => media.head(k),
      resumeMultipartUpload: (k: string, u: string) => {
        const upload = media.resumeMultipartUpload(k, u);
        return {
          ...upload,
          uploadPart: async (n: number, value: Uint8Array) => {
            const part = await upload.uploadPart(n, value);
            if (!deleted) {
              deleted = true;
              // Another run cannot take the lease while this one holds it.
              expect(await runImport(deps, id)).toEqual({ kind: "skipped" });
              expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
            }
            return part;
          },
          complete: (parts: R2UploadedPart[]) => upload.complete(parts),
        } as unknown as R2MultipartUpload;
      },
    } as unknown as R2Bucket;
    expect(await runImport(deps, id)).toEqual({ kind: "skipped" });
    expect(origin.hits).toHaveLength(1);
    expect(await partsOf(id)).toEqual([]);
  });
});

describe("lost and given-up imports", () => {
  it("the sweeper sends again the message of an import whose lease ran out", async () => {
    const { id } = await importOf();
    const { sent, queue } = capturingQueue<ImportMessage>();
    const now = Date.now();
    await env.DB.prepare("UPDATE videos SET import_lease_until = ? WHERE id = ?")
      .bind(new Date(now - 60_000).toISOString(), id)
      .run();
    await sweepImports({ db: env.DB, queue }, now);
    expect(sent.map((message) => message.videoId)).not.toContain(id);
    await sweepImports({ db: env.DB, queue }, now + 2 * 60_000);
    expect(sent.map((message) => message.videoId)).toContain(id);
  });

  it("the dead-letter queue fails the video import_failed, with video.errored", async () => {
    const { id } = await importOf();
    const row = (await env.DB.prepare("SELECT project_id FROM videos WHERE id = ?").bind(id).first()) as {
      project_id: string;
    };
    const result = await runQueue("video-imports-dlq", [{ projectId: row.project_id, videoId: id }]);
    expect(result.explicitAcks).toEqual(["m0"]);
    await expectFailed(id, "could not be fetched after many tries");
  });
});

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sourceKey } from "../../src/lib/storage-keys";
import type { TusUpload } from "../../src/uploads/tus/object";
import { api, bearer, errorCode, json, newProject, newWorkspace, withCookie } from "../helpers";
import {
  bytesOf,
  create,
  cutOffBody,
  type DirectUpload,
  MiB,
  newUpload,
  offsetOf,
  patch,
  sha256,
  TUS,
  tus,
} from "./support";

const objectOf = (upload: DirectUpload) => env.TUS_UPLOADS.get(env.TUS_UPLOADS.idFromName(upload.id));

async function progress(key: string, id: string) {
  const response = await api(`/v1/uploads/${id}`, bearer(key));
  expect(response.status).toBe(200);
  return (await response.json()) as { status: string; offset: number; length: number | null; videoId: string };
}

async function videoStatus(key: string, id: string): Promise<number | string> {
  const response = await api(`/v1/videos/${id}`, bearer(key));
  return response.status === 200 ? ((await response.json()) as { status: string }).status : response.status;
}

async function stored(upload: DirectUpload): Promise<Uint8Array | null> {
  const object = await env.MEDIA.get(sourceKey(upload.video.projectId, upload.video.id));
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}

describe("POST /v1/uploads", () => {
  it("creates a waiting video and a tus URL that needs no key, with the defaults", async () => {
    const { key } = await newWorkspace();
    const before = Date.now();
    const upload = await newUpload(key, { video: { title: "From a browser", visibility: "unlisted" } });
    expect(upload.url).toMatch(/^http:\/\/api\.test\/tus\/[0-9A-Z]{26}\.[A-Za-z0-9_-]{22}$/);
    expect(upload.video).toMatchObject({
      status: "waiting_for_upload",
      title: "From a browser",
      visibility: "unlisted",
    });
    const expires = Date.parse(upload.expiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(expires - before).toBeLessThanOrEqual(3600_000 + 5000);
    const options = await tus(upload.url, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("tus-version")).toBe("1.0.0");
    expect(options.headers.get("tus-resumable")).toBe("1.0.0");
    expect(options.headers.get("tus-extension")).toBe("creation,termination,expiration");
    expect(options.headers.get("tus-max-size")).toBe(String(50 * 1024 ** 3));
    expect(options.headers.get("access-control-allow-origin")).toBe("*");
    expect(await progress(key, upload.id)).toMatchObject({
      status: "waiting",
      offset: 0,
      length: null,
      videoId: upload.video.id,
    });
  });

  it.each([
    ["an unknown field", { nope: 1 }],
    ["an origin with a path", { corsOrigin: "https://app.example/page" }],
    ["an origin that is no URL", { corsOrigin: "app.example" }],
    ["a non-http origin", { corsOrigin: "ftp://app.example" }],
    ["expiresIn under 60", { expiresIn: 59 }],
    ["expiresIn over a day", { expiresIn: 86_401 }],
    ["a fractional expiresIn", { expiresIn: 90.5 }],
    ["maxSizeBytes 0", { maxSizeBytes: 0 }],
    ["maxSizeBytes over 50 GiB", { maxSizeBytes: 50 * 1024 ** 3 + 1 }],
    ["an empty title", { video: { title: "" } }],
    ["an unknown video field", { video: { duration: 3 } }],
    ["a control character in the title", { video: { title: "a\u0007b" } }],
  ])("refuses %s with 400 invalid_body", async (_, body) => {
    const { key } = await newWorkspace();
    const response = await api("/v1/uploads", bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("answers a browser's preflight for the URL's origin, and names it on every answer", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key, { corsOrigin: "https://App.Example:8443", maxSizeBytes: 1000 });
    const preflight = await tus(upload.url, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example:8443",
        "access-control-request-method": "POST",
        "access-control-request-headers": "tus-resumable, upload-length, upload-metadata",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example:8443");
    expect(preflight.headers.get("tus-max-size")).toBe("1000");
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["tus-resumable", "upload-offset", "upload-length", "upload-metadata", "content-type"]) {
      expect(allowed).toContain(header);
    }
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    const location = await create(upload.url, 10);
    const uploadPreflight = await tus(location, { method: "OPTIONS" });
    expect(uploadPreflight.headers.get("access-control-allow-methods")).toMatch(/PATCH.*DELETE|DELETE.*PATCH/);
    for (const response of [
      await tus(location, { method: "HEAD", headers: TUS }),
      await patch(location, 0, "0123456789"),
      await tus(location, { method: "HEAD" }),
    ]) {
      expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example:8443");
      expect(response.headers.get("tus-resumable")).toBe("1.0.0");
      const exposed = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase();
      for (const header of ["location", "upload-offset", "upload-length", "upload-expires", "tus-resumable"]) {
        expect(exposed).toContain(header);
      }
    }
  });
});

describe("the tus protocol", () => {
  it("creates once: 201 with Location and Upload-Expires, then 409 with the first Location", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const first = await tus(upload.url, { method: "POST", headers: { ...TUS, "upload-length": "100" } });
    expect(first.status).toBe(201);
    const location = first.headers.get("location");
    expect(location).toBe(`${upload.url}/source`);
    // An HTTP date equal to expiresAt to the second.
    const expires = first.headers.get("upload-expires") ?? "";
    expect(expires).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(Date.parse(expires)).toBe(Math.floor(Date.parse(upload.expiresAt) / 1000) * 1000);
    const again = await tus(upload.url, { method: "POST", headers: { ...TUS, "upload-length": "100" } });
    expect(again.status).toBe(409);
    expect(again.headers.get("location")).toBe(location);
    const head = await tus(location as string, { method: "HEAD", headers: TUS });
    expect(head.status).toBe(200);
    expect(head.headers.get("upload-offset")).toBe("0");
    expect(head.headers.get("upload-length")).toBe("100");
    expect(head.headers.get("cache-control")).toBe("no-store");
  });

  it("answers every documented tus error status, each with Tus-Resumable", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key, { maxSizeBytes: 1000 });
    const expectStatus = (response: Response, status: number) => {
      expect(response.status).toBe(status);
      expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    };
    // 412 without (or with another) Tus-Resumable, on every method but OPTIONS.
    const noVersion = await tus(upload.url, { method: "POST", headers: { "upload-length": "10" } });
    expectStatus(noVersion, 412);
    expect(noVersion.headers.get("tus-version")).toBe("1.0.0");
    expectStatus(
      await tus(upload.url, { method: "POST", headers: { "tus-resumable": "0.2.2", "upload-length": "10" } }),
      412,
    );
    // 413: longer than maxSizeBytes.
    expectStatus(await tus(upload.url, { method: "POST", headers: { ...TUS, "upload-length": "1001" } }), 413);
    expectStatus(await tus(upload.url, { method: "POST", headers: TUS }), 400);
    const location = await create(upload.url, 1000);
    for (const method of ["HEAD", "PATCH", "DELETE"]) {
      const response = await tus(location, { method, headers: { "tus-resumable": "2.0.0" } });
      expectStatus(response, 412);
    }
    expectStatus(await tus(location, { method: "OPTIONS" }), 204);
    // 415: another Content-Type.
    expectStatus(await patch(location, 0, "abc", { "content-type": "application/octet-stream" }), 415);
    // 409: another offset, or none.
    expectStatus(await patch(location, 5, "abc"), 409);
    expectStatus(await patch(location, 0, "abc", { "upload-offset": "x" }), 409);
    expectStatus(await patch(location, 0, "abc"), 204);
    expectStatus(await patch(location, 0, "abc"), 409);
    // 413: bytes past Upload-Length, and a PATCH body over 64 MiB; nothing of them is kept.
    expectStatus(await patch(location, 3, new Uint8Array(998)), 413);
    expectStatus(await patch(location, 3, "x", { "content-length": String(64 * MiB + 1) }), 413);
    expect(await offsetOf(location)).toBe(3);
    // A body with no declared length that runs past Upload-Length keeps only what fits.
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(500));
        controller.enqueue(new Uint8Array(600));
        controller.close();
      },
    });
    expectStatus(await patch(location, 3, streamed, {}), 413);
    expect(await offsetOf(location)).toBe(1000);
    // 404: an altered URL or upload, or one that never existed.
    const altered = `${upload.url.slice(0, -3)}AAA`;
    // The signature's unused low bits: another spelling of its last character decodes to the same
    // bytes, and is still not this URL.
    for (const respelled of otherSpellings(upload.url)) {
      expectStatus(await tus(respelled, { method: "POST", headers: { ...TUS, "upload-length": "1" } }), 404);
    }
    expectStatus(await tus(altered, { method: "POST", headers: { ...TUS, "upload-length": "1" } }), 404);
    expectStatus(await tus(`${altered}/source`, { method: "HEAD", headers: TUS }), 404);
    expectStatus(await tus("http://api.test/tus/nothing/source", { method: "HEAD", headers: TUS }), 404);
    expectStatus(await tus(`${location}/more`, { method: "HEAD", headers: TUS }), 404);
    // 405 for a method tus does not use here, with Allow.
    const get = await tus(location, { method: "PUT", headers: TUS });
    expectStatus(get, 405);
    expect(get.headers.get("allow")).toContain("PATCH");
  });

  it("answers 404 for an upload not yet created", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    expect((await tus(`${upload.url}/source`, { method: "HEAD", headers: TUS })).status).toBe(404);
  });

  it("takes chunks split anywhere, across parts, and stores exactly the bytes sent", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key, { corsOrigin: "https://app.example" });
    const source = bytesOf(17 * MiB + 12_345);
    const location = await create(upload.url, source.byteLength);
    // Chunk sizes that straddle the 8 MiB part boundaries in every way.
    const sizes = [1, 3 * MiB, 5 * MiB - 1, 2, 4 * MiB + 7, 5 * MiB];
    let offset = 0;
    for (const size of sizes) {
      const chunk = source.slice(offset, Math.min(offset + size, source.byteLength));
      const response = await patch(location, offset, chunk);
      expect(response.status).toBe(204);
      offset += chunk.byteLength;
      expect(response.headers.get("upload-offset")).toBe(String(offset));
      expect(await offsetOf(location)).toBe(offset);
      if (offset < source.byteLength) expect((await progress(key, upload.id)).status).toBe("uploading");
    }
    const rest = source.slice(offset);
    expect((await patch(location, offset, rest)).status).toBe(204);
    expect(await videoStatus(key, upload.video.id)).toBe("uploaded");
    expect(await progress(key, upload.id)).toMatchObject({
      status: "completed",
      offset: source.byteLength,
      length: source.byteLength,
    });
    expect(await sha256((await stored(upload)) as Uint8Array)).toBe(await sha256(source));
    // A completed upload still answers HEAD with its whole length, and takes no more bytes.
    expect(await offsetOf(location)).toBe(source.byteLength);
    expect((await patch(location, source.byteLength, "x")).status).toBe(413);
  });

  it("keeps what arrived of a PATCH cut off mid-body, so the client resumes from HEAD", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const source = bytesOf(9 * MiB + 77, 3);
    const location = await create(upload.url, source.byteLength);
    expect((await patch(location, 0, source.slice(0, 3 * MiB))).status).toBe(204);
    // 7 MiB of a larger chunk arrive, then the connection drops: part 1 (8 MiB) fills mid-body.
    await patch(location, 3 * MiB, cutOffBody(source.slice(3 * MiB, 10 * MiB - 1 * MiB))).catch(() => null);
    const resumeAt = await offsetOf(location);
    expect(resumeAt).toBeGreaterThanOrEqual(3 * MiB);
    expect(resumeAt).toBeLessThanOrEqual(9 * MiB);
    expect((await patch(location, resumeAt, source.slice(resumeAt))).status).toBe(204);
    expect(await sha256((await stored(upload)) as Uint8Array)).toBe(await sha256(source));
    expect(await videoStatus(key, upload.video.id)).toBe("uploaded");
  });

  it("resumes from a tail the object must read back from its storage", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const source = bytesOf(8 * MiB + 10, 5);
    const location = await create(upload.url, source.byteLength);
    expect((await patch(location, 0, source.slice(0, 5 * MiB))).status).toBe(204);
    // Forget the tail kept in memory, as an evicted object would.
    const held = await runInDurableObject(objectOf(upload), (instance: TusUpload) => {
      const cache = (instance as unknown as { store: { tailCache: Uint8Array | null } }).store;
      const size = cache.tailCache?.byteLength;
      cache.tailCache = null;
      return size;
    });
    expect(held).toBe(5 * MiB);
    expect((await patch(location, 5 * MiB, source.slice(5 * MiB))).status).toBe(204);
    expect(await sha256((await stored(upload)) as Uint8Array)).toBe(await sha256(source));
  });

  it("completes an empty upload at its creation", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const location = await create(upload.url, 0);
    expect(await offsetOf(location)).toBe(0);
    expect(await videoStatus(key, upload.video.id)).toBe("uploaded");
    expect((await stored(upload))?.byteLength).toBe(0);
  });
});

describe("a tus completion, through the part API's completeUpload (issue 25, item 8)", () => {
  it("is finished when its video has moved past uploaded meanwhile, and the upload reads completed", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const location = await create(upload.url, 10);
    // Another completion holds the lease as the last byte arrives: this one is left to the alarm.
    const held = new Date(Date.now() + 60_000).toISOString();
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(held, upload.video.id)
      .run();
    expect((await patch(location, 0, "0123456789")).status).toBe(204);
    // That completion recorded the video, and its encoding started.
    await env.DB.prepare("UPDATE videos SET status = 'processing', completion_lease_until = NULL WHERE id = ?")
      .bind(upload.video.id)
      .run();
    await runDurableObjectAlarm(objectOf(upload));
    const phase = await runInDurableObject(objectOf(upload), (_: TusUpload, s) => {
      const doc = JSON.parse(s.storage.sql.exec<{ doc: string }>("SELECT doc FROM state").one().doc) as {
        phase: string;
      };
      return doc.phase;
    });
    expect(phase).toBe("completed");
    expect((await progress(key, upload.id)).status).toBe("completed");
  });
});

describe("ending an upload", () => {
  it("DELETE ends the upload and deletes its video, as DELETE /v1/videos/{id} does", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const location = await create(upload.url, 20);
    expect((await patch(location, 0, "0123456789")).status).toBe(204);
    const deleted = await tus(location, { method: "DELETE", headers: TUS });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get("tus-resumable")).toBe("1.0.0");
    expect(await videoStatus(key, upload.video.id)).toBe(404);
    expect((await tus(location, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await patch(location, 10, "0123456789")).status).toBe(404);
    expect((await progress(key, upload.id)).status).toBe("cancelled");
    // The multipart upload is aborted: R2 takes no part for it.
    const multipart = env.MEDIA.resumeMultipartUpload(
      sourceKey(upload.video.projectId, upload.video.id),
      await runInDurableObject(objectOf(upload), (_: TusUpload, state) => {
        const row = state.storage.sql.exec<{ doc: string }>("SELECT doc FROM state").one();
        return (JSON.parse(row.doc) as { r2UploadId: string }).r2UploadId;
      }),
    );
    await expect(multipart.uploadPart(1, "x")).rejects.toThrow();
  });

  it("a deleted video (by the API) closes its upload at once; a completed one says 404 too", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const location = await create(upload.url, 4);
    expect((await patch(location, 0, "ab")).status).toBe(204);
    expect((await api(`/v1/videos/${upload.video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect((await tus(location, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await patch(location, 2, "cd")).status).toBe(404);
    expect((await progress(key, upload.id)).status).toBe("cancelled");
    const tail = await runInDurableObject(objectOf(upload), (_: TusUpload, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM tail").one(),
    );
    expect(tail.n).toBe(0);

    const done = await newUpload(key);
    const doneLocation = await create(done.url, 2);
    expect((await patch(doneLocation, 0, "ok")).status).toBe(204);
    expect(await offsetOf(doneLocation)).toBe(2);
    const bulk = await api(
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "delete", videoIds: [done.video.id] })),
    );
    expect(bulk.status).toBe(200);
    expect((await tus(doneLocation, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await progress(key, done.id)).status).toBe("cancelled");
  });

  it("a deleted project closes its uploads at once", async () => {
    const { session, key, project } = await newWorkspace();
    const upload = await newUpload(key);
    const location = await create(upload.url, 4);
    expect((await api(`/v1/projects/${project.id}`, withCookie(session, { method: "DELETE" }))).status).toBe(204);
    // OPTIONS included, though the purge has not reached the upload's object yet.
    expect((await tus(location, { method: "OPTIONS" })).status).toBe(404);
    expect((await tus(location, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await tus(upload.url, { method: "POST", headers: { ...TUS, "upload-length": "1" } })).status).toBe(404);
  });

  it("an expired URL answers 404, and the alarm aborts its multipart upload", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key, { expiresIn: 60 });
    const location = await create(upload.url, 100);
    expect((await patch(location, 0, "0123456789")).status).toBe(204);
    const later = Date.parse(upload.expiresAt) + 1;
    await runInDurableObject(objectOf(upload), (instance: TusUpload) => {
      instance.clock = () => later;
    });
    expect((await tus(location, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await patch(location, 10, "0123456789")).status).toBe(404);
    expect((await tus(upload.url, { method: "OPTIONS" })).status).toBe(404);
    expect(await runDurableObjectAlarm(objectOf(upload))).toBe(true);
    const state = await runInDurableObject(objectOf(upload), (_: TusUpload, s) => {
      const doc = JSON.parse(s.storage.sql.exec<{ doc: string }>("SELECT doc FROM state").one().doc) as {
        phase: string;
      };
      const tail = s.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM tail").one().n;
      return { phase: doc.phase, tail };
    });
    expect(state).toEqual({ phase: "ended", tail: 0 });
    expect(await videoStatus(key, upload.video.id)).toBe("waiting_for_upload");
  });
});

describe("GET /v1/uploads/{id}", () => {
  it("is 404 upload_not_found for an unknown, malformed or foreign id", async () => {
    const { key } = await newWorkspace();
    const other = await newWorkspace();
    const upload = await newUpload(other.key);
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope", upload.id]) {
      const response = await api(`/v1/uploads/${id}`, bearer(key));
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("upload_not_found");
    }
    // Case-insensitive, like every id.
    expect((await api(`/v1/uploads/${upload.id.toLowerCase()}`, bearer(other.key))).status).toBe(200);
  });

  it("works under a session with ?projectId=", async () => {
    const { session, key, project } = await newWorkspace();
    const upload = await newUpload(key);
    const response = await api(`/v1/uploads/${upload.id}?projectId=${project.id}`, withCookie(session));
    expect(response.status).toBe(200);
    const elsewhere = await newProject(session);
    expect((await api(`/v1/uploads/${upload.id}?projectId=${elsewhere.id}`, withCookie(session))).status).toBe(404);
  });
});

describe("the part API on a tus upload's video", () => {
  it("takes no parts: the upload's object owns the multipart upload", async () => {
    const { key } = await newWorkspace();
    const upload = await newUpload(key);
    const response = await api(
      `/v1/videos/${upload.video.id}/upload/parts/1`,
      bearer(key, { method: "PUT", body: "abc", headers: { "content-length": "3" } }),
    );
    expect(response.status).toBe(409);
    expect(await errorCode(response)).toBe("upload_not_active");
  });
});

/** The other spellings of a URL whose last base64url character carries 4 unused bits. */
function otherSpellings(url: string): string[] {
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const last = ALPHABET.indexOf(url.at(-1) as string);
  return Array.from({ length: 16 }, (_, low) => (last & 0b110000) | low)
    .filter((value) => value !== last)
    .map((value) => `${url.slice(0, -1)}${ALPHABET[value]}`);
}

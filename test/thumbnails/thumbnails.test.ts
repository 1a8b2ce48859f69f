import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { crc32 } from "../../src/images/crc32";
import { inspectImage } from "../../src/images/inspect";
import { stripMetadata } from "../../src/images/strip";
import { customThumbnailKey, legacyThumbnailKey, posterKey, videoPrefix } from "../../src/lib/storage-keys";
import { emptyPool, fakeEncoder, finishAll, playable, probeFacts } from "../encoding/pipeline/support";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, newKey, newVideo, newWorkspace, type VideoBody, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";
import { greyPng, greyRows, paddedPng, zlib } from "../support/images";
import { sentMessage } from "../support/queues";

const FIVE_MIB = 5 * 1024 * 1024;
type Result = { videoId: string; thumbnailUrl: string; source: string };

function put(key: string, videoId: string, body: BodyInit, contentType: string, extra: Record<string, string> = {}) {
  return api(
    `/v1/videos/${videoId}/thumbnail`,
    bearer(key, { method: "PUT", body, headers: { "content-type": contentType, ...extra } }),
  );
}

/** Fetches a public URL of this Worker without any credential. */
function open(url: string, headers: Record<string, string> = {}) {
  return api(new URL(url).pathname, { headers });
}

async function setUp() {
  const { key, session, project } = await newWorkspace();
  const { video } = await newVideo(key);
  return { key, session, project, video };
}

describe("PUT /v1/videos/{id}/thumbnail", () => {
  it.each([
    ["image/png", IMAGES.rgbPng, "png"],
    ["image/jpeg", IMAGES.progressiveJpg, "jpg"],
    ["image/webp", IMAGES.losslessWebp, "webp"],
  ] as const)(
    "stores a %s and serves it publicly with its bytes, type, ETag and cache lifetime",
    async (type, bytes, ext) => {
      const { key, project, video } = await setUp();
      const response = await put(key, video.id, bytes, type);
      expect(response.status).toBe(200);
      const result = (await response.json()) as Result;
      expect(result).toEqual({
        videoId: video.id,
        source: "custom",
        thumbnailUrl: expect.stringMatching(
          new RegExp(`^http://api\\.test/thumbnails/${project.id}/${video.id}/[0-9A-Z]{26}\\.${ext}$`),
        ),
      });
      const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
      expect(read.thumbnail).toEqual({ source: "custom", url: result.thumbnailUrl });

      const served = await open(result.thumbnailUrl);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe(type);
      expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const etag = served.headers.get("etag");
      expect(etag).toMatch(/^".+"$/);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(stripMetadata(bytes, type));
      const again = await open(result.thumbnailUrl, { "if-none-match": etag ?? "" });
      expect(again.status).toBe(304);
    },
  );

  it("never stores or serves the upload's metadata (a PNG text chunk with a GPS position)", async () => {
    const { key, video } = await setUp();
    const text = new TextEncoder().encode("GPS\u0000SECRET-52.3676N-4.9041E");
    const chunk = new Uint8Array(12 + text.length);
    const view = new DataView(chunk.buffer);
    view.setUint32(0, text.length);
    chunk.set(new TextEncoder().encode("tEXt"), 4);
    chunk.set(text, 8);
    view.setUint32(8 + text.length, crc32(chunk.subarray(4, 8 + text.length)));
    // After the signature (8 bytes) and IHDR (25 bytes).
    const png = new Uint8Array([...IMAGES.rgbPng.subarray(0, 33), ...chunk, ...IMAGES.rgbPng.subarray(33)]);
    const result = (await (await put(key, video.id, png, "image/png")).json()) as Result;
    const served = new Uint8Array(await (await open(result.thumbnailUrl)).arrayBuffer());
    expect(new TextDecoder().decode(served)).not.toContain("SECRET");
    expect(served).toEqual(stripMetadata(IMAGES.rgbPng, "image/png"));
  });

  it("answers conditional requests as RFC 9110 says, ignoring malformed conditional headers", async () => {
    const { key, video } = await setUp();
    const result = (await (await put(key, video.id, IMAGES.rgbPng, "image/png")).json()) as Result;
    const served = await open(result.thumbnailUrl);
    const etag = served.headers.get("etag") ?? "";
    const lastModified = Date.parse(served.headers.get("last-modified") ?? "");
    expect(lastModified).toBeGreaterThan(0);
    const cases: [Record<string, string>, number][] = [
      [{ "if-match": "garbage" }, 200],
      [{ "if-none-match": '"a' }, 200],
      [{ "if-unmodified-since": "yesterday" }, 200],
      [{ "if-modified-since": "yesterday" }, 200],
      [{ "if-match": '"other"' }, 412],
      [{ "if-match": etag }, 200],
      [{ "if-match": "*" }, 200],
      [{ "if-unmodified-since": new Date(lastModified - 86_400_000).toUTCString() }, 412],
      [{ "if-unmodified-since": new Date(lastModified).toUTCString() }, 200],
      [{ "if-none-match": `"other", ${etag}` }, 304],
      [{ "if-none-match": `W/${etag}` }, 304],
      [{ "if-modified-since": new Date(lastModified).toUTCString() }, 304],
      [{ "if-none-match": '"other"', "if-modified-since": new Date(lastModified).toUTCString() }, 200],
    ];
    for (const [headers, status] of cases) {
      const response = await open(result.thumbnailUrl, headers);
      expect([headers, response.status]).toEqual([headers, status]);
      if (status === 412) expect(await errorCode(response)).toBe("precondition_failed");
      if (status === 200) expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
      if (status === 304) expect(response.headers.get("etag")).toBe(etag);
    }
  });

  it("ignores Content-Type parameters", async () => {
    const { key, video } = await setUp();
    expect((await put(key, video.id, IMAGES.rgbPng, "image/png; charset=binary")).status).toBe(200);
  });

  it("replaces a custom thumbnail: the old URL answers 404 and its object is gone", async () => {
    const { key, video } = await setUp();
    const first = (await (await put(key, video.id, IMAGES.rgbPng, "image/png")).json()) as Result;
    const second = (await (await put(key, video.id, IMAGES.baselineJpg, "image/jpeg")).json()) as Result;
    expect(second.thumbnailUrl).not.toBe(first.thumbnailUrl);
    const gone = await open(first.thumbnailUrl);
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("not_found");
    const [, , projectId = "", , file = ""] = new URL(second.thumbnailUrl).pathname.split("/");
    const listed = await env.MEDIA.list({ prefix: videoPrefix(projectId, video.id) });
    expect(listed.objects.map((object) => object.key)).toEqual([customThumbnailKey(projectId, video.id, file)]);
  });

  it("accepts exactly 5 MiB and refuses one byte more, declared or streamed", async () => {
    const { key, video } = await setUp();
    const exact = paddedPng(IMAGES.rgbPng, FIVE_MIB);
    expect(inspectImage(exact, "image/png").ok).toBe(true);
    expect((await put(key, video.id, exact, "image/png")).status).toBe(200);

    const over = paddedPng(IMAGES.rgbPng, FIVE_MIB + 1);
    const declared = await put(key, video.id, over, "image/png");
    expect(declared.status).toBe(413);
    expect(await errorCode(declared)).toBe("payload_too_large");

    // No Content-Length: a stream of 64 MiB is cut off at the limit, not read to its end.
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * FIVE_MIB) return controller.close();
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const streamed = await put(key, video.id, stream, "image/png");
    expect(streamed.status).toBe(413);
    expect(await errorCode(streamed)).toBe("payload_too_large");
    // Read up to the limit and one chunk past it (measured: 5 MiB + 64 KiB), never the whole stream.
    expect(pulled).toBeLessThan(FIVE_MIB + 1024 * 1024);
  });

  it("refuses a body over 5 MiB whose Content-Length claims less", async () => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, new Uint8Array(FIVE_MIB + 10), "image/png", { "content-length": "10" });
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe("payload_too_large");
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read.thumbnail.source).toBe("auto");
  });

  it.each([
    ["text/plain", IMAGES.rgbPng],
    ["image/gif", IMAGES.rgbPng],
    ["application/json", IMAGES.rgbPng],
    ["", IMAGES.rgbPng],
  ])("refuses Content-Type %j with 415", async (type, bytes) => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, bytes, type);
    expect(response.status).toBe(415);
    expect(await errorCode(response)).toBe("unsupported_media_type");
  });

  it.each([
    ["PNG bytes declared as JPEG", IMAGES.rgbPng, "image/jpeg"],
    ["JPEG bytes declared as WebP", IMAGES.baselineJpg, "image/webp"],
    ["a PNG cut short", IMAGES.rgbPng.slice(0, 100), "image/png"],
    ["a JPEG without EOI", IMAGES.baselineJpg.slice(0, -2), "image/jpeg"],
    ["a PNG over 8192 pixels wide", IMAGES.tooWidePng, "image/png"],
    ["an empty body", new Uint8Array(0), "image/png"],
    ["only a PNG signature", IMAGES.rgbPng.slice(0, 8), "image/png"],
  ])("refuses %s with invalid_image", async (_, bytes, type) => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, bytes, type);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_image");
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read.thumbnail.source).toBe("auto");
  });

  it("answers video_not_found for unknown, malformed and deleted videos, after checking the image", async () => {
    const { key, video } = await setUp();
    await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    for (const id of [video.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope"]) {
      const response = await put(key, id, IMAGES.rgbPng, "image/png");
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("video_not_found");
    }
    expect(await errorCode(await put(key, "nope", IMAGES.rgbPng, "image/jpeg"))).toBe("invalid_image");
    expect(await errorCode(await put(key, "nope", IMAGES.rgbPng, "text/plain"))).toBe("unsupported_media_type");
  });

  it("uses PUBLIC_BASE_URL as the origin of thumbnail URLs", async () => {
    const { key, video } = await setUp();
    const response = await apiWith(
      { PUBLIC_BASE_URL: "https://media.example.com" },
      `/v1/videos/${video.id}/thumbnail`,
      bearer(key, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
    );
    expect(((await response.json()) as Result).thumbnailUrl).toMatch(/^https:\/\/media\.example\.com\/thumbnails\//);
  });

  it("leaves no object behind when the database write fails", async () => {
    const { key, project, video } = await setUp();
    const db = new InstrumentedD1(env.DB, (sql) => sql.includes("SET custom_thumbnail_key"));
    const response = await apiWith(
      { DB: db.binding },
      `/v1/videos/${video.id}/thumbnail`,
      bearer(key, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
    );
    expect(response.status).toBe(500);
    expect((await env.MEDIA.list({ prefix: videoPrefix(project.id, video.id) })).objects).toHaveLength(0);
  });

  it("needs a write key, and projectId under cookie auth", async () => {
    const { key, session, project, video } = await setUp();
    const reader = await newKey(session, project.id, ["read"]);
    expect(await errorCode(await put(reader, video.id, IMAGES.rgbPng, "image/png"))).toBe("insufficient_scope");
    const cookie = (query: string) =>
      api(
        `/v1/videos/${video.id}/thumbnail${query}`,
        withCookie(session, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
      );
    expect(await errorCode(await cookie(""))).toBe("invalid_project_id");
    expect((await cookie(`?projectId=${project.id}`)).status).toBe(200);
    expect((await put(key, video.id, IMAGES.rgbPng, "image/png")).headers.get("ratelimit-policy")).toBe(
      '"thumbnail";q=30;w=60',
    );
  });
});

describe("a thumbnail's pixels are decoded", () => {
  it("refuses a PNG whose image data does not decode, or holds less than its IHDR declares", async () => {
    const { key, video } = await setUp();
    const rows = greyRows(32, 24);
    expect((await put(key, video.id, greyPng(32, 24, await zlib(rows)), "image/png")).status).toBe(200);
    const garbled = await zlib(rows);
    for (let i = 8; i < garbled.length - 4; i++) garbled[i] = (garbled[i] as number) ^ 0x5a;
    for (const bytes of [greyPng(32, 24, garbled), greyPng(32, 25, await zlib(rows))]) {
      const response = await put(key, video.id, bytes, "image/png");
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_image");
    }
  });

  it("refuses a JPEG whose scan is cut short (its markers intact) or whose frame header is taller than its data", async () => {
    const { key, video } = await setUp();
    const jpeg = IMAGES.baselineJpg;
    const sos = jpeg.findIndex((v, i) => v === 0xff && jpeg[i + 1] === 0xda);
    const start = sos + 2 + (((jpeg[sos + 2] as number) << 8) | (jpeg[sos + 3] as number));
    const cut = new Uint8Array([...jpeg.subarray(0, start + ((jpeg.length - 2 - start) >> 1)), 0xff, 0xd9]);
    const taller = jpeg.slice();
    taller[jpeg.findIndex((v, i) => v === 0xff && jpeg[i + 1] === 0xc0) + 5] = 0x04;
    for (const bytes of [cut, taller]) {
      const response = await put(key, video.id, bytes, "image/jpeg");
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_image");
    }
  });
});

describe("DELETE /v1/videos/{id}/thumbnail", () => {
  it("restores the automatic poster frame and deletes the custom image", async () => {
    const { key, project, video } = await setUp();
    const custom = (await (await put(key, video.id, IMAGES.rgbPng, "image/png")).json()) as Result;
    const response = await api(`/v1/videos/${video.id}/thumbnail`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      videoId: video.id,
      source: "auto",
      thumbnailUrl: `http://api.test/thumbnails/${project.id}/${video.id}/poster.jpg`,
    });
    expect((await open(custom.thumbnailUrl)).status).toBe(404);
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read.thumbnail.source).toBe("auto");
    // Again: nothing custom left, the same answer.
    expect((await api(`/v1/videos/${video.id}/thumbnail`, bearer(key, { method: "DELETE" }))).status).toBe(200);
  });

  it("answers video_not_found for an unknown video", async () => {
    const { key } = await setUp();
    const response = await api("/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV/thumbnail", bearer(key, { method: "DELETE" }));
    expect(await errorCode(response)).toBe("video_not_found");
  });

  it("keeps the poster frame apart: the encoder's poster never replaces a custom image", async () => {
    const { key, project, video } = await setUp();
    const custom = (await (await put(key, video.id, IMAGES.rgbPng, "image/png")).json()) as Result;
    // What an encode retry does: write the poster frame to its own key.
    await env.MEDIA.put(posterKey(project.id, video.id), IMAGES.baselineJpg, {
      httpMetadata: { contentType: "image/jpeg" },
    });
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read.thumbnail.url).toBe(custom.thumbnailUrl);
    const removed = (await (
      await api(`/v1/videos/${video.id}/thumbnail`, bearer(key, { method: "DELETE" }))
    ).json()) as Result;
    const poster = await open(removed.thumbnailUrl);
    expect(poster.status).toBe(200);
    expect(new Uint8Array(await poster.arrayBuffer())).toEqual(IMAGES.baselineJpg);
  });
});

describe("objects written before the per-video layout", () => {
  it("are still served at the URLs issued for them", async () => {
    const { key, project, video } = await setUp();
    const legacy = legacyThumbnailKey(project.id, video.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV.png");
    await env.MEDIA.put(legacy, IMAGES.rgbPng, { httpMetadata: { contentType: "image/png" } });
    await env.DB.prepare("UPDATE videos SET custom_thumbnail_key = ? WHERE id = ?").bind(legacy, video.id).run();
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read.thumbnail.url).toBe(
      `http://api.test/thumbnails/${project.id}/${video.id}/01ARZ3NDEKTSV4RRFFQ69G5FAV.png`,
    );
    const served = await open(read.thumbnail.url);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(IMAGES.rgbPng);
  });
});

describe("a deleted video's thumbnail", () => {
  it("is deleted even when it was set between the delete's read and its write", async () => {
    const { key, project, video } = await setUp();
    const raced = customThumbnailKey(project.id, video.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV.png");
    const db = new InstrumentedD1(env.DB);
    db.before = async (sql) => {
      if (!sql.includes("SET deleted_at") || (await env.MEDIA.head(raced))) return;
      // A concurrent thumbnail upload lands now, after the delete read the video.
      await env.MEDIA.put(raced, IMAGES.rgbPng, { httpMetadata: { contentType: "image/png" } });
      await env.DB.prepare("UPDATE videos SET custom_thumbnail_key = ? WHERE id = ?").bind(raced, video.id).run();
    };
    const response = await apiWith({ DB: db.binding }, `/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(204);
    expect(await env.MEDIA.head(raced)).toBeNull();
    const row = await env.DB.prepare("SELECT custom_thumbnail_key FROM videos WHERE id = ?").bind(video.id).first();
    expect(row?.custom_thumbnail_key).toBeNull();
  });

  it("is deleted with the video", async () => {
    const { key, video } = await setUp();
    const custom = (await (await put(key, video.id, IMAGES.rgbPng, "image/png")).json()) as Result;
    const response = await apiWith({}, `/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(204);
    expect((await open(custom.thumbnailUrl)).status).toBe(404);
  });
});

describe("the public thumbnail route", () => {
  it.each(["/thumbnails/x/y/z.png", "/thumbnails/01ARZ3NDEKTSV4RRFFQ69G5FAV/01ARZ3NDEKTSV4RRFFQ69G5FAV/poster.jpg"])(
    "answers %s with 404 not_found",
    async (path) => {
      const response = await api(path);
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("not_found");
    },
  );
});

describe("a private or deleted video's thumbnail URLs", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A ready video with its poster frame, and its poster URL. */
  async function readyVideo() {
    const encoder = fakeEncoder();
    await emptyPool();
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(8));
    await finishAll(encoder, id);
    return { key, id, poster: `/thumbnails/${project.id}/${id}/poster.jpg` };
  }

  it("answer 403 playback_token_required while the video is private, the poster and a custom one, at once", async () => {
    const { key, id, poster } = await readyVideo();
    expect((await api(poster)).status).toBe(200);
    const custom = (await (await put(key, id, IMAGES.rgbPng, "image/png")).json()) as Result;
    expect((await open(custom.thumbnailUrl)).status).toBe(200);
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    for (const path of [poster, new URL(custom.thumbnailUrl).pathname]) {
      const refused = await api(path);
      expect(refused.status, path).toBe(403);
      expect(await errorCode(refused)).toBe("playback_token_required");
      // No cache keeps the refusal once the video is public again.
      expect(refused.headers.get("cache-control")).toBe("no-store");
    }
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "unlisted" })));
    expect((await api(poster)).status).toBe(200);
    expect((await open(custom.thumbnailUrl)).status).toBe(200);
  });

  it("answer 404 as soon as the DELETE answers, while the objects still wait for the clean-up", async () => {
    const { key, id, poster } = await readyVideo();
    const custom = (await (await put(key, id, IMAGES.rgbPng, "image/png")).json()) as Result;
    // The deletions queue keeps the message: its consumer (the R2 clean-up) runs later.
    vi.spyOn(env.DELETION_QUEUE, "send").mockResolvedValue(sentMessage);
    const customKey = (await env.DB.prepare("SELECT custom_thumbnail_key AS k FROM videos WHERE id = ?")
      .bind(id)
      .first<{ k: string }>()) as { k: string };
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    // The deletions queue has not run: R2 still holds both images.
    expect(await env.MEDIA.head(customKey.k)).not.toBeNull();
    for (const path of [poster, new URL(custom.thumbnailUrl).pathname]) {
      const gone = await api(path);
      expect(gone.status, path).toBe(404);
      expect(await errorCode(gone)).toBe("not_found");
    }
  });
});

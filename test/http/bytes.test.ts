import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { serveBuffer, serveR2Object } from "../../src/http/bytes";
import { ApiError } from "../../src/http/errors";
import { FIRST_READ_BYTES, READ_CHUNK_BYTES } from "../../src/lib/r2";

/**
 * Byte serving, once (`src/http/bytes.ts`): what playback, the edge cache, thumbnails and the
 * encoder's reads all answer with. Range, If-Range, 416, the conditions and HEAD, for an R2 object
 * and for bytes in memory.
 */
const SIZE = READ_CHUNK_BYTES + 1000;
const FILE = Uint8Array.from({ length: SIZE }, (_, i) => (i * 13) % 251);
const KEY = "test/bytes/file.bin";

/** Whether two byte arrays hold the same bytes (deep equality of 8 MiB element by element is slow). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function get(headers: Record<string, string> = {}, method = "GET") {
  return new Request("http://api.test/file", { method, headers });
}

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("serveR2Object", () => {
  async function stored() {
    await env.MEDIA.put(KEY, FILE, { httpMetadata: { contentType: "video/mp4", cacheControl: "public, max-age=60" } });
  }

  it("answers the whole file, and each kind of range (one bounded read past READ_CHUNK_BYTES)", {
    timeout: 60_000,
  }, async () => {
    await stored();
    const whole = await serveR2Object(env.MEDIA, KEY, get(), {});
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    expect(whole.headers.get("cache-control")).toBe("public, max-age=60");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("content-length")).toBe(String(SIZE));
    expect(same(new Uint8Array(await whole.arrayBuffer()), FILE)).toBe(true);
    for (const [range, from, to] of [
      ["bytes=0-99", 0, 99],
      ["bytes=10-", 10, SIZE - 1],
      [`bytes=${READ_CHUNK_BYTES - 5}-${READ_CHUNK_BYTES + 5}`, READ_CHUNK_BYTES - 5, READ_CHUNK_BYTES + 5],
      ["bytes=-7", SIZE - 7, SIZE - 1],
      ["bytes=100-99999999999", 100, SIZE - 1],
    ] as const) {
      const part = await serveR2Object(env.MEDIA, KEY, get({ range }), { type: "video/mp4", cacheControl: "no-cache" });
      expect(part.status, range).toBe(206);
      expect(part.headers.get("cache-control")).toBe("no-cache");
      expect(part.headers.get("content-range"), range).toBe(`bytes ${from}-${to}/${SIZE}`);
      expect(part.headers.get("content-length"), range).toBe(String(to - from + 1));
      expect(same(new Uint8Array(await part.arrayBuffer()), FILE.slice(from, to + 1)), range).toBe(true);
    }
  });

  it("answers 416 past the end, 304 and 412 on the conditions, If-Range, HEAD, 404", async () => {
    await stored();
    const past = await failure(serveR2Object(env.MEDIA, KEY, get({ range: `bytes=${SIZE}-` }), {}));
    expect(past.code).toBe("range_not_satisfiable");
    const huge = await failure(serveR2Object(env.MEDIA, KEY, get({ range: "bytes=99999999999999999999-" }), {}));
    expect(huge.code).toBe("range_not_satisfiable");
    const first = await serveR2Object(env.MEDIA, KEY, get({ range: "bytes=0-0" }), {});
    await first.arrayBuffer();
    const etag = first.headers.get("etag") as string;
    const date = first.headers.get("last-modified") as string;
    expect((await serveR2Object(env.MEDIA, KEY, get({ "if-none-match": etag }), {})).status).toBe(304);
    expect((await serveR2Object(env.MEDIA, KEY, get({ "if-modified-since": date }), {})).status).toBe(304);
    expect((await failure(serveR2Object(env.MEDIA, KEY, get({ "if-match": '"x"' }), {}))).code).toBe(
      "precondition_failed",
    );
    const kept = await serveR2Object(env.MEDIA, KEY, get({ range: "bytes=0-3", "if-range": etag }), {});
    expect(kept.status).toBe(206);
    await kept.arrayBuffer();
    const lifted = await serveR2Object(env.MEDIA, KEY, get({ range: "bytes=0-3", "if-range": '"other"' }), {});
    expect(lifted.status).toBe(200);
    expect((await lifted.arrayBuffer()).byteLength).toBe(SIZE);
    const head = await serveR2Object(env.MEDIA, KEY, get({ range: "bytes=0-3" }, "HEAD"), {});
    expect(head.status).toBe(206);
    expect(head.headers.get("content-length")).toBe("4");
    expect(head.body).toBeNull();
    expect((await failure(serveR2Object(env.MEDIA, "test/bytes/none", get(), {}))).code).toBe("not_found");
  });

  it("reads an open-ended range in growing reads, so a reader that leaves early cost one short read", async () => {
    await stored();
    const reads: (R2Range | undefined)[] = [];
    const media = new Proxy(env.MEDIA, {
      get(target, name) {
        if (name !== "get") return Reflect.get(target, name).bind(target);
        return (key: string, options?: R2GetOptions) => {
          reads.push(options?.range as R2Range | undefined);
          return target.get(key, options);
        };
      },
    });
    const left = await serveR2Object(media, KEY, get({ range: "bytes=10-" }), {});
    const reader = (left.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    expect(reads).toEqual([{ offset: 10, length: FIRST_READ_BYTES }]);
    reads.length = 0;
    const whole = await serveR2Object(media, KEY, get({ range: "bytes=10-" }), {});
    expect(same(new Uint8Array(await whole.arrayBuffer()), FILE.slice(10))).toBe(true);
    const lengths = reads.map((range) => (range && "length" in range ? range.length : undefined));
    expect(lengths).toEqual([
      FIRST_READ_BYTES,
      2 * FIRST_READ_BYTES,
      4 * FIRST_READ_BYTES,
      SIZE - 10 - 7 * FIRST_READ_BYTES,
    ]);
    expect(Math.max(...(lengths as number[]))).toBeLessThanOrEqual(READ_CHUNK_BYTES);
  });

  it("answers the whole file, with no Accept-Ranges, when ranges are off (thumbnails)", async () => {
    await stored();
    const whole = await serveR2Object(env.MEDIA, KEY, get({ range: "bytes=0-9" }), { ranges: false });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("accept-ranges")).toBeNull();
    expect((await whole.arrayBuffer()).byteLength).toBe(SIZE);
  });
});

describe("serveBuffer", () => {
  const text = new TextEncoder().encode("#EXTM3U\n#EXT-X-VERSION:3\n");
  const facts = { etag: '"abc"', type: "application/vnd.apple.mpegurl", lastModified: Date.UTC(2026, 0, 1) };

  it("answers ranges, 416, conditions and HEAD as for a stored file", async () => {
    const part = serveBuffer(get({ range: "bytes=1-3" }), text, facts, { cacheControl: "no-cache" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 1-3/${text.byteLength}`);
    expect(await part.text()).toBe("EXT");
    expect((await failure(() => serveBuffer(get({ range: "bytes=500-" }), text, facts, {}))).code).toBe(
      "range_not_satisfiable",
    );
    expect(serveBuffer(get({ "if-none-match": '"abc"' }), text, facts, {}).status).toBe(304);
    expect(serveBuffer(get({ range: "bytes=1-3", "if-range": '"zzz"' }), text, facts, {}).status).toBe(200);
    expect(serveBuffer(get({}, "HEAD"), text, facts, {}).body).toBeNull();
    const modified = serveBuffer(get(), text, facts, {});
    expect(modified.headers.get("last-modified")).toBe("Thu, 01 Jan 2026 00:00:00 GMT");
  });
});

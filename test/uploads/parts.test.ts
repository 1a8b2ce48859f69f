import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { R2_ERRORS, r2ErrorCode } from "../../src/lib/r2";
import { MIN_PART_BYTES, partsProblem } from "../../src/uploads/parts";
import type { StoredPart } from "../../src/uploads/source-queries";
import { api, bearer, errorCode, json, newVideo, newWorkspace, type VideoBody } from "../helpers";
import { apiWith } from "../support/app";

const MiB = 1024 * 1024;

/** PUTs part `n` of the video's upload: the answer's status, and the part as a completion names it. */
async function putPart(key: string, videoId: string, n: number, bytes: Uint8Array) {
  const response = await api(
    `/v1/videos/${videoId}/upload/parts/${n}`,
    bearer(key, { method: "PUT", body: bytes, headers: { "content-length": String(bytes.byteLength) } }),
  );
  const { etag } = (await response.json()) as { etag: string };
  return { status: response.status, part: { partNumber: n, etag } };
}
const stored = (...sizes: number[]) =>
  new Map<number, StoredPart>(sizes.map((size, i) => [i + 1, { part_number: i + 1, size, etag: `e${i + 1}` }]));

describe("R2's part rule", () => {
  it("takes equal parts of at least 5 MiB and a smaller (or equal) last one, or one part of any size", () => {
    expect(partsProblem([1, 2, 3], stored(6 * MiB, 6 * MiB, 1))).toBeNull();
    expect(partsProblem([1, 2], stored(MIN_PART_BYTES, MIN_PART_BYTES))).toBeNull();
    expect(partsProblem([1], stored(10))).toBeNull();
  });

  it("names the first part at fault", () => {
    expect(partsProblem([1, 2, 3], stored(6 * MiB, 5 * MiB, MiB))).toMatch(/^Part 2 is 5,242,880 bytes, but part 1/);
    expect(partsProblem([1, 2], stored(MIN_PART_BYTES - 1, 1))).toMatch(/^Part 1 is 5,242,879 bytes/);
    expect(partsProblem([1, 2], stored(6 * MiB, 7 * MiB))).toMatch(/^Part 2, the last, is 7,340,032 bytes/);
    // Listed out of order, the rule is about part numbers, not the list's order.
    expect(partsProblem([3, 1, 2], stored(6 * MiB, 6 * MiB, 7 * MiB))).toMatch(/^Part 3, the last/);
  });

  it("leaves parts with no record to R2", () => {
    expect(partsProblem([1, 2], new Map())).toBeNull();
  });
});

describe("a completion whose parts break the rule", () => {
  it("is 400 invalid_parts naming the part, and the video keeps its upload and parts for another try", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const put = async (n: number, size: number) => {
      const { status, part } = await putPart(key, video.id, n, new Uint8Array(size));
      expect(status).toBe(200);
      return part;
    };
    const parts = [await put(1, 6 * MiB), await put(2, 5 * MiB), await put(3, MiB)];
    const refused = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", { parts })));
    expect(refused.status).toBe(400);
    const body = (await refused.clone().json()) as { error: { message: string } };
    expect(await errorCode(refused)).toBe("invalid_parts");
    expect(body.error.message).toMatch(/^Part 2 /);
    expect(((await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody).status).toBe(
      "waiting_for_upload",
    );
    // The client puts the offending part again, at the size of the others, and completes.
    parts[1] = await put(2, 6 * MiB);
    const completed = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", { parts })));
    expect(completed.status).toBe(200);
    expect(await completed.json()).toMatchObject({ status: "uploaded" });
  });
});

describe("R2's refusals of a completion, by R2's error codes (issue 25, item 7)", () => {
  it("are what Miniflare's R2 throws: 10025 for an unknown part or etag, 10011 for a part too small", async () => {
    const key = `test/${crypto.randomUUID()}`;
    const unknownPart = await env.MEDIA.createMultipartUpload(key);
    await unknownPart.uploadPart(1, new Uint8Array([1, 2, 3]));
    const thrown = await unknownPart.complete([{ partNumber: 1, etag: "bogus" }]).catch((error: unknown) => error);
    expect(r2ErrorCode(thrown)).toBe(R2_ERRORS.invalidPart);
    // Every completion error names the operation, so matching "part" in the text told nothing.
    expect(String(thrown)).toMatch(/MultipartUpload/);
    const small = await env.MEDIA.createMultipartUpload(`${key}-small`);
    const first = await small.uploadPart(1, new Uint8Array(10));
    const second = await small.uploadPart(2, new Uint8Array(10));
    expect(r2ErrorCode(await small.complete([first, second]).catch((error: unknown) => error))).toBe(
      R2_ERRORS.entityTooSmall,
    );
    await small.abort();
    expect(r2ErrorCode(await small.complete([first]).catch((error: unknown) => error))).toBe(R2_ERRORS.noSuchUpload);
    expect(r2ErrorCode(new Error("completeMultipartUpload: no code here"))).toBeNull();
    expect(r2ErrorCode("not an error")).toBeNull();
  });

  it("answer a transient R2 failure with 500 internal_error, never 400, and release the video", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const { etag } = (await putPart(key, video.id, 1, new Uint8Array([1, 2, 3]))).part;
    const failing = new Proxy(env.MEDIA, {
      get(bucket, property) {
        if (property !== "resumeMultipartUpload") {
          const value = Reflect.get(bucket, property, bucket);
          return typeof value === "function" ? value.bind(bucket) : value;
        }
        return (objectKey: string, uploadId: string) => {
          const upload = bucket.resumeMultipartUpload(objectKey, uploadId);
          return {
            complete: async () => {
              // What R2 throws when it fails on its side: its code, and the operation's name.
              throw Object.assign(
                new Error("completeMultipartUpload: We encountered an internal error. Please try again. (10001)"),
                { code: 10001 },
              );
            },
            abort: () => upload.abort(),
          };
        };
      },
    });
    const body = json("POST", { parts: [{ partNumber: 1, etag }] });
    const response = await apiWith({ MEDIA: failing }, `/v1/videos/${video.id}/upload/complete`, bearer(key, body));
    expect(response.status).toBe(500);
    expect(await errorCode(response)).toBe("internal_error");
    // The lease is given back: the same completion succeeds once R2 does.
    const retried = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, body));
    expect(retried.status).toBe(200);
  });
});

describe("a repeated completion", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(["processing", "ready", "errored"] as const)(
    "answers 200 with the video when it is %s with the same parts, 409 upload_not_active with others",
    async (status) => {
      const { key } = await newWorkspace();
      const { video } = await newVideo(key);
      const { etag } = (await putPart(key, video.id, 1, new Uint8Array([1, 2, 3]))).part;
      const complete = (parts: unknown) =>
        api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", { parts })));
      expect((await complete([{ partNumber: 1, etag }])).status).toBe(200);
      // The encoding moved the video on (the pipeline's own statements are tested in test/encoding/pipeline/).
      await env.DB.prepare("UPDATE videos SET status = ? WHERE id = ?").bind(status, video.id).run();
      const again = await complete([{ partNumber: 1, etag }]);
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ id: video.id, status });
      const other = await complete([{ partNumber: 1, etag: "another" }]);
      expect(other.status).toBe(409);
      expect(await errorCode(other)).toBe("upload_not_active");
    },
  );
});

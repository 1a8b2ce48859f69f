import { describe, expect, it } from "vitest";
import { MIN_PART_BYTES, partsProblem } from "../../src/videos/parts";
import type { StoredPart } from "../../src/videos/queries";
import { api, bearer, errorCode, json, newVideo, newWorkspace, type VideoBody } from "../helpers";

const MiB = 1024 * 1024;
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
      const response = await api(
        `/v1/videos/${video.id}/upload/parts/${n}`,
        bearer(key, { method: "PUT", body: new Uint8Array(size), headers: { "content-length": String(size) } }),
      );
      expect(response.status).toBe(200);
      return { partNumber: n, etag: ((await response.json()) as { etag: string }).etag };
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

import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { PLAYBACK_STATE_TTL_MS } from "../../src/lib/playback-cache";
import { SLICE_BYTES } from "../../src/playback/edge-cache";
import { finishAll, playable, probeFacts, withFakeEncoder } from "../encoding/pipeline/support";
import { api, bearer, json, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { countingBindings } from "../support/round-trips";

/**
 * Playback at scale (docs/playback-at-scale.md): an unchanging `/play/` file served again with no
 * D1 or R2 read, the playback state read from D1 at most once per video per 5 s, and changes that
 * narrow who may play (private, deleted) in force at once where they are made. Every request here
 * goes through bindings that count their round trips.
 */
describe("playback at scale: the location's cache", () => {
  const encoder = withFakeEncoder();

  /** An MP4 of two and a half slices, so ranges cross slices. */
  const MP4 = Uint8Array.from({ length: Math.floor(SLICE_BYTES * 2.5) }, (_, i) => (i * 7) % 253);

  async function readyVideo() {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: true })),
    );
    const { id } = await playable(encoder(), key, probeFacts(6));
    await finishAll(encoder(), id, { mp4: MP4 });
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", { expiresIn: 3600 })));
    const { token } = (await minted.json()) as { token: string };
    return { key, id, token };
  }

  /** One GET through counting bindings: the answer (its body read) and the round trips it made. */
  async function counted(path: string, headers: Record<string, string> = {}) {
    const counting = countingBindings();
    const response = await apiWith(counting.bindings, path, { headers });
    const body = new Uint8Array(await response.arrayBuffer());
    return { response, body, trips: counting.counts() };
  }

  const NONE = { d1: 0, do: 0, r2: 0, queue: 0 };

  it("serves a file again with no D1 or R2 read, to id and token viewers alike", async () => {
    const { id, token } = await readyVideo();
    for (const file of ["360p/seg_00000.ts", "storyboard.jpg", "video.mp4"]) {
      const range: Record<string, string> = file === "video.mp4" ? { range: "bytes=0-1048575" } : {};
      const first = await counted(`/play/${id}/${file}`, range);
      expect(first.response.status, file).toBe(file === "video.mp4" ? 206 : 200);
      expect(first.response.headers.get("x-cache"), file).toBe("MISS");
      expect(first.trips.r2, file).toBeGreaterThan(0);
      const again = await counted(`/play/${id}/${file}`, range);
      expect(again.response.headers.get("x-cache"), file).toBe("HIT");
      expect(again.trips, file).toEqual(NONE);
      expect(again.body, file).toEqual(first.body);
      // The token names the same video: the same cached bytes, no read of its own.
      const byToken = await counted(`/play/${token}/${file}`, range);
      expect(byToken.response.headers.get("x-cache"), file).toBe("HIT");
      expect(byToken.trips, file).toEqual(NONE);
      expect(byToken.body, file).toEqual(first.body);
    }
  });

  it("answers ranges, conditions and 416 from the cached slices, bytes exact across slices", async () => {
    const { id } = await readyVideo();
    const whole = await counted(`/play/${id}/video.mp4`);
    expect(whole.response.status).toBe(200);
    expect(whole.body).toEqual(MP4);
    // Its length is said, not left to a chunked body: players read the size from it.
    expect(whole.response.headers.get("content-length")).toBe(String(MP4.byteLength));
    const etag = whole.response.headers.get("etag") as string;
    const lastModified = whole.response.headers.get("last-modified") as string;
    const size = MP4.byteLength;
    for (const [range, from, to] of [
      ["bytes=0-99", 0, 99],
      [`bytes=${SLICE_BYTES - 10}-${SLICE_BYTES + 9}`, SLICE_BYTES - 10, SLICE_BYTES + 9],
      ["bytes=-10", size - 10, size - 1],
      [`bytes=${SLICE_BYTES * 2}-`, SLICE_BYTES * 2, size - 1],
      ["bytes=5-99999999", 5, size - 1],
    ] as const) {
      const part = await counted(`/play/${id}/video.mp4`, { range });
      expect(part.response.status, range).toBe(206);
      expect(part.response.headers.get("content-range"), range).toBe(`bytes ${from}-${to}/${size}`);
      expect(part.response.headers.get("content-length"), range).toBe(String(to - from + 1));
      expect(part.body, range).toEqual(MP4.slice(from, to + 1));
      expect(part.trips, range).toEqual(NONE);
    }
    const past = await counted(`/play/${id}/video.mp4`, { range: `bytes=${size}-` });
    expect(past.response.status).toBe(416);
    expect(past.response.headers.get("content-range")).toBe(`bytes */${size}`);
    expect(past.trips).toEqual(NONE);
    const notModified = await counted(`/play/${id}/video.mp4`, { "if-none-match": etag });
    expect(notModified.response.status).toBe(304);
    expect(notModified.response.headers.get("etag")).toBe(etag);
    expect(notModified.trips).toEqual(NONE);
    const since = await counted(`/play/${id}/video.mp4`, { "if-modified-since": lastModified });
    expect(since.response.status).toBe(304);
    const failed = await counted(`/play/${id}/video.mp4`, { "if-match": '"another"' });
    expect(failed.response.status).toBe(412);
    // If-Range naming this file keeps the range; naming another (or a weak tag) sends the whole file.
    const kept = await counted(`/play/${id}/video.mp4`, { range: "bytes=0-9", "if-range": etag });
    expect(kept.response.status).toBe(206);
    expect(kept.body).toEqual(MP4.slice(0, 10));
    for (const ifRange of ['"another"', `W/${etag}`, "garbage"]) {
      const full = await counted(`/play/${id}/video.mp4`, { range: "bytes=0-9", "if-range": ifRange });
      expect(full.response.status, ifRange).toBe(200);
      expect(full.body, ifRange).toEqual(MP4);
    }
    const head = await apiWith({}, `/play/${id}/video.mp4`, { method: "HEAD", headers: { range: "bytes=0-9" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-length")).toBe("10");
    expect(await head.text()).toBe("");
  });

  it("reads the playback state from D1 at most once per video per 5 s", async () => {
    const { id } = await readyVideo();
    const first = await counted(`/play/${id}/360p/index.m3u8`);
    expect(first.response.status).toBe(200);
    const again = await counted(`/play/${id}/360p/index.m3u8`);
    expect(again.trips.d1).toBe(0);
    // Another location's write (made straight in D1): this one follows within 5 s.
    await env.DB.prepare("UPDATE videos SET visibility = 'private' WHERE id = ?").bind(id).run();
    const stale = await counted(`/play/${id}/360p/index.m3u8`);
    expect(stale.response.status).toBe(200);
    expect(stale.trips.d1).toBe(0);
    const later = Date.now() + PLAYBACK_STATE_TTL_MS;
    vi.spyOn(Date, "now").mockReturnValue(later);
    const fresh = await counted(`/play/${id}/360p/index.m3u8`);
    expect(fresh.response.status).toBe(403);
    expect(fresh.trips.d1).toBe(1);
  });

  it("makes a video private at once: id URLs 403 even for cached bytes, a token still plays them", async () => {
    const { key, id, token } = await readyVideo();
    const file = "360p/seg_00000.ts";
    expect((await counted(`/play/${id}/${file}`)).response.status).toBe(200);
    expect((await counted(`/play/${id}/${file}`)).response.headers.get("x-cache")).toBe("HIT");
    const edit = await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    expect(edit.status).toBe(200);
    const refused = await counted(`/play/${id}/${file}`);
    expect(refused.response.status).toBe(403);
    const byToken = await counted(`/play/${token}/${file}`);
    expect(byToken.response.status).toBe(200);
    expect(byToken.response.headers.get("x-cache")).toBe("HIT");
    expect(byToken.trips.r2).toBe(0);
    // Public again, in bulk: at once too.
    const bulk = await api(
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "set_visibility", visibility: "public", videoIds: [id] })),
    );
    expect(bulk.status).toBe(200);
    expect((await counted(`/play/${id}/${file}`)).response.status).toBe(200);
    const privateAgain = await api(
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "set_visibility", visibility: "private", videoIds: [id] })),
    );
    expect(privateAgain.status).toBe(200);
    const refusedAgain = await counted(`/play/${id}/${file}`);
    expect(refusedAgain.response.status).toBe(403);
    const problem = JSON.parse(new TextDecoder().decode(refusedAgain.body)) as { error: { code: string } };
    expect(problem.error.code).toBe("playback_token_required");
  });

  it("never serves a deleted video's cached bytes again, by id or token, alone or in bulk", async () => {
    for (const how of ["one", "bulk"] as const) {
      const { key, id, token } = await readyVideo();
      for (const subject of [id, token]) {
        await counted(`/play/${subject}/video.mp4`, { range: "bytes=0-99" });
        expect((await counted(`/play/${subject}/video.mp4`, { range: "bytes=0-99" })).trips).toEqual(NONE);
      }
      const deleted =
        how === "one"
          ? await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))
          : await api("/v1/videos/bulk", bearer(key, json("POST", { action: "delete", videoIds: [id] })));
      expect(deleted.status, how).toBe(how === "one" ? 204 : 200);
      for (const subject of [id, token]) {
        const gone = await counted(`/play/${subject}/video.mp4`, { range: "bytes=0-99" });
        expect(gone.response.status, how).toBe(404);
        expect(gone.trips.r2, how).toBe(0);
      }
    }
  });

  it("stops a deleted project's videos at once", async () => {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: false })),
    );
    const { id } = await playable(encoder(), key, probeFacts(6));
    await finishAll(encoder(), id);
    await counted(`/play/${id}/360p/seg_00000.ts`);
    expect((await counted(`/play/${id}/360p/seg_00000.ts`)).trips).toEqual(NONE);
    const removed = await api(`/v1/projects/${project.id}`, withCookie(session, { method: "DELETE" }));
    expect(removed.status).toBe(204);
    expect((await counted(`/play/${id}/360p/seg_00000.ts`)).response.status).toBe(404);
  });

  it("does not hold back what only grows: a video remembered processing plays its MP4 once ready", async () => {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: true })),
    );
    const { id } = await playable(encoder(), key, probeFacts(6));
    // Remembered while processing: its MP4 is not there yet.
    expect((await counted(`/play/${id}/360p/index.m3u8`)).response.status).toBe(200);
    expect((await counted(`/play/${id}/video.mp4`)).response.status).toBe(404);
    await finishAll(encoder(), id, { mp4: MP4 });
    const mp4 = await counted(`/play/${id}/video.mp4`, { range: "bytes=0-9" });
    expect(mp4.response.status).toBe(206);
    expect(mp4.body).toEqual(MP4.slice(0, 10));
  });
});

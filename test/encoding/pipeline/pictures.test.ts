import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { storyboard } from "../../../media-plan/pictures.mjs";
import { coordinatorOf } from "../../../src/encoding/pipeline/coordinator-stub";
import { frameKey, storyboardKey } from "../../../src/lib/storage-keys";
import { api, bearer, errorCode, json, newWorkspace } from "../../helpers";
import {
  callback,
  encodingState,
  failWith,
  finishAll,
  finishStill,
  finishTiles,
  jobsOf,
  playable,
  probeFacts,
  result,
  withFakeEncoder,
} from "./support";

/**
 * The coordinator's pictures beside the renditions (docs/encoding.md#frames-and-the-storyboard):
 * frames made when asked for, while processing and once ready, each made once; the storyboard,
 * without which a video is not ready.
 */
const encoder = withFakeEncoder();

const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]);

function putFrame(job: Parameters<typeof callback>[0], bytes = JPEG) {
  return callback(job, "still", { method: "PUT", body: bytes, headers: { "content-type": "image/jpeg" } });
}

/** The frame jobs (stills other than the poster) the encoder got for a video. */
function frameJobs(videoId: string) {
  return jobsOf(encoder(), videoId, "still").filter((job) => job.kind === "still" && job.width !== null);
}

async function waitForFrameJobs(videoId: string, count: number) {
  for (let i = 0; i < 200 && frameJobs(videoId).length < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return frameJobs(videoId);
}

describe("frames", () => {
  it("are made once on an interactive slot while processing: concurrent asks share the job, later asks read it", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await playable(encoder(), key, probeFacts(60));
    const coordinator = coordinatorOf(env, id);
    const asks = [coordinator.frame(750, 320), coordinator.frame(750, 320)];
    const [job] = await waitForFrameJobs(id, 1);
    expect(job).toMatchObject({ kind: "still", priority: "interactive", time: 30, width: 320 });
    if (!job) throw new Error("no frame job");
    expect((await putFrame(job)).status).toBe(204);
    expect(await Promise.all(asks)).toEqual(["stored", "stored"]);
    expect(await env.MEDIA.get(frameKey(projectId, id, 750, 320)).then((o) => o?.arrayBuffer())).toEqual(JPEG.buffer);
    expect((await result(job)).status).toBe(204);
    expect(await coordinator.frame(750, 320)).toBe("stored");
    expect(frameJobs(id)).toHaveLength(1);
  });

  it("are made after ready, keep their first bytes, and a failing frame is refused without touching the video", async () => {
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(8));
    await finishAll(encoder(), id);
    expect((await encodingState(id)).phase).toBe("ready");
    const coordinator = coordinatorOf(env, id);

    const asked = coordinator.frame(25, 640);
    const [job] = await waitForFrameJobs(id, 1);
    if (!job) throw new Error("no frame job");
    expect((await putFrame(job)).status).toBe(204);
    expect(await asked).toBe("stored");
    // A second copy of the same frame (a job that ran again) is dropped: the bytes stay.
    expect((await putFrame(job, new Uint8Array([0xff, 0xd8, 9, 0xff, 0xd9]))).status).toBe(204);
    expect(await env.MEDIA.get(frameKey(project.id, id, 25, 640)).then((o) => o?.arrayBuffer())).toEqual(JPEG.buffer);
    expect((await result(job)).status).toBe(204);
    const state = await encodingState(id);
    expect(state.units).toEqual([]);
    expect(state.slots).toEqual([]);

    const failing = coordinator.frame(50, 640);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const jobs = await waitForFrameJobs(id, 1 + attempt);
      expect((await failWith(jobs.at(-1) as (typeof jobs)[number], "encoding_failed")).status).toBe(204);
    }
    expect(await failing).toBe("failed");
    const after = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { status: string };
    expect(after.status).toBe("ready");
  });

  it("outside the video or its widths are gone, and a ready video deleted meanwhile keeps no frame", async () => {
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(8));
    const coordinator = coordinatorOf(env, id);
    expect(await coordinator.frame(200, 320)).toBe("gone");
    expect(await coordinator.frame(0, 15)).toBe("gone");
    expect(await coordinator.frame(0, 1281)).toBe("gone");
    await finishAll(encoder(), id);

    void coordinator.frame(10, 320);
    const [job] = await waitForFrameJobs(id, 1);
    if (!job) throw new Error("no frame job");
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect((await putFrame(job)).status).toBe(410);
    expect(await env.MEDIA.head(frameKey(project.id, id, 10, 320))).toBeNull();
  });
});

/** Deletes a video, which frees every slot its coordinator holds for the tests after. */
async function deleteVideo(key: string, id: string) {
  expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
}

describe("frames are bounded", () => {
  it("a frame nobody waits for any more is not made: its queued unit goes when its last viewer's wait ends", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(8));
    await finishAll(encoder(), id);
    const coordinator = coordinatorOf(env, id);
    // Two interactive slots: two frames start, the third waits for a slot.
    const asks = [coordinator.frame(1, 320), coordinator.frame(2, 320), coordinator.frame(3, 320)];
    const started = await waitForFrameJobs(id, 2);
    expect(started).toHaveLength(2);
    expect(await Promise.all(asks)).toEqual(["pending", "pending", "pending"]);
    const units = (await encodingState(id)).units;
    expect(units.map((unit) => unit.id).sort()).toEqual(["frame-1-320", "frame-2-320"]);
    // The running ones end; the slot they free takes no abandoned frame.
    for (const job of started) expect((await failWith(job, "interrupted")).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(frameJobs(id).map((job) => job.kind === "still" && job.time)).not.toContain(3 / 25);
    await deleteVideo(key, id);
  }, 30_000);

  it("at most 60 frames not yet made a minute per video: the 61st is refused with the seconds to wait; a made one is served", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(60));
    const coordinator = coordinatorOf(env, id);
    const asks = Array.from({ length: 60 }, (_, i) => coordinator.frame(i, 320));
    const [first] = await waitForFrameJobs(id, 1);
    if (!first) throw new Error("no frame job");
    const refused = await coordinator.frame(100, 320);
    expect(refused).toEqual({ retryAfter: expect.any(Number) });
    const { retryAfter } = refused as { retryAfter: number };
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A frame asked for already is no new frame; a made one is always served.
    expect((await putFrame(first)).status).toBe(204);
    expect(await coordinator.frame(first.kind === "still" ? Math.round((first.time ?? 0) * 25) : 0, 320)).toBe(
      "stored",
    );
    await deleteVideo(key, id);
    await Promise.all(asks);
  }, 30_000);

  it("at most 60 frames not yet made a minute per client address over HTTP: 429 rate_limited with Retry-After; a made frame is served", async () => {
    const { key, project } = await newWorkspace();
    const a = await playable(encoder(), key, probeFacts(60));
    const b = await playable(encoder(), key, probeFacts(60));
    const ask = (videoId: string, time: number, ip = "203.0.113.77") =>
      api(`/play/${videoId}/thumbnail?time=${time}&width=320`, { headers: { "cf-connecting-ip": ip } });
    const waiting = Array.from({ length: 60 }, (_, i) => ask(a.id, i * 0.5));
    await waitForFrameJobs(a.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const refused = await ask(b.id, 1);
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another client is not held back by this one; a frame made already is served to anyone.
    const other = ask(b.id, 2, "198.51.100.9");
    await env.MEDIA.put(frameKey(project.id, b.id, 25, 320), JPEG);
    const made = await ask(b.id, 1);
    expect(made.status).toBe(200);
    await made.body?.cancel();
    await deleteVideo(key, a.id);
    await deleteVideo(key, b.id);
    for (const response of await Promise.all([...waiting, other])) {
      expect([200, 404, 503]).toContain(response.status);
      await response.body?.cancel();
    }
  }, 60_000);

  it("deleting a ready video cancels every frame of it not yet made, at once: running jobs stop, queued ones never start", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(8));
    await finishAll(encoder(), id);
    const coordinator = coordinatorOf(env, id);
    const asks = [1, 2, 3, 4].map((frame) => coordinator.frame(frame, 320));
    const running = await waitForFrameJobs(id, 2);
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(encoder().cancelled).toEqual(expect.arrayContaining(running.map((job) => job.jobId)));
    expect(await Promise.all(asks)).toEqual(["gone", "gone", "gone", "gone"]);
    expect(frameJobs(id)).toHaveLength(2);
    expect((await encodingState(id)).units).toEqual([]);
  }, 30_000);
});

describe("the storyboard", () => {
  it("is made of tiles, background jobs each storing the frame it shows, then tiled into a sprite; the video is ready only with it", async () => {
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(25));
    expect(jobsOf(encoder(), id, "tiles")).toHaveLength(0); // two background slots: the poster and the first run
    await finishStill(jobsOf(encoder(), id, "still")[0] as Parameters<typeof finishStill>[0]);
    const [tiles] = jobsOf(encoder(), id, "tiles");
    if (tiles?.kind !== "tiles") throw new Error("no tiles job");
    expect(tiles).toMatchObject({ priority: "background", from: 0, to: 3, plan: { duration: 25 } });
    // A tile is the frame at its cue's middle at the tile width: stored as that frame, so a viewer
    // asking for it gets the same bytes. The sprite reads them back once every one is stored.
    await finishTiles(tiles);
    const board = storyboard(tiles.plan);
    for (const cue of board.cues) {
      expect(await env.MEDIA.head(frameKey(project.id, id, cue.frame, board.tileWidth))).not.toBeNull();
    }
    expect(jobsOf(encoder(), id, "storyboard")).toHaveLength(1);
    // A tile's job that is over can neither store nor read a tile any more.
    expect((await callback(tiles, "tiles/0", { method: "PUT", body: "x" })).status).toBe(410);
    expect((await callback(tiles, "tiles/0")).status).toBe(410);
    await finishAll(encoder(), id);
    expect(await env.MEDIA.head(storyboardKey(project.id, id))).not.toBeNull();
    expect((await encodingState(id)).phase).toBe("ready");
  });
});

describe("a tiles job's callbacks, asked wrong", () => {
  it("refuse a cue that is not a number (404), one outside the job's span (410), a body without its length (400)", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(25));
    await finishStill(jobsOf(encoder(), id, "still")[0] as Parameters<typeof finishStill>[0]);
    const [tiles] = jobsOf(encoder(), id, "tiles");
    if (tiles?.kind !== "tiles") throw new Error("no tiles job");
    const jpeg = { method: "PUT", body: "x", headers: { "content-type": "image/jpeg" } };
    for (const cue of ["abc", "-1", "1.5", "99999"]) {
      const answer = await callback(tiles, `tiles/${cue}`, jpeg);
      expect([cue, answer.status, await errorCode(answer)]).toEqual([cue, 404, "not_found"]);
    }
    // Cue 3 is the storyboard's, but not this job's (0 to 3): the job may not store it.
    const other = await callback(tiles, `tiles/${tiles.to}`, jpeg);
    expect([other.status, await errorCode(other)]).toEqual([410, "encoding_job_void"]);
    const unsized = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("x"));
        controller.close();
      },
    });
    const chunked = await callback(tiles, "tiles/0", { method: "PUT", body: unsized, duplex: "half" } as RequestInit);
    expect([chunked.status, await errorCode(chunked)]).toEqual([400, "invalid_body"]);
  });
});

describe("the storyboard over /play", () => {
  it("answers 404 until ready, then its WebVTT (a cue per tile) and its sprite, under the id and a token", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(25));
    expect((await api(`/play/${id}/storyboard.vtt`)).status).toBe(404);
    expect((await api(`/play/${id}/storyboard.jpg`)).status).toBe(404);
    await finishAll(encoder(), id);

    const vtt = await api(`/play/${id}/storyboard.vtt`);
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get("content-type")).toBe("text/vtt");
    expect(vtt.headers.get("access-control-allow-origin")).toBe("*");
    expect(await vtt.text()).toBe(
      `${[
        "WEBVTT",
        "00:00:00.000 --> 00:00:08.333\nstoryboard.jpg#xywh=0,0,240,136",
        "00:00:08.333 --> 00:00:16.667\nstoryboard.jpg#xywh=240,0,240,136",
        "00:00:16.667 --> 00:00:25.000\nstoryboard.jpg#xywh=480,0,240,136",
      ].join("\n\n")}\n`,
    );
    const sprite = await api(`/play/${id}/storyboard.jpg`);
    expect(sprite.status).toBe(200);
    expect(sprite.headers.get("content-type")).toBe("image/jpeg");
    expect(new Uint8Array(await sprite.arrayBuffer()).slice(0, 2)).toEqual(new Uint8Array([0xff, 0xd8]));

    // Private: the id's URLs are refused, a token's play (the sprite's URL is relative to the VTT).
    expect((await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })))).status).toBe(200);
    expect((await api(`/play/${id}/storyboard.vtt`)).status).toBe(403);
    const minted = (await (await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", {})))).json()) as {
      token: string;
    };
    expect((await api(`/play/${minted.token}/storyboard.vtt`)).status).toBe(200);
    expect((await api(`/play/${minted.token}/storyboard.jpg`)).status).toBe(200);
  });
});

describe("frames over /play/<x>/thumbnail?time=", () => {
  it("answers the frame at a time and width, made once: the same bytes and ETag for the same frame", async () => {
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(20));
    const asked = api(`/play/${id}/thumbnail?time=12.5&width=320`);
    const [job] = await waitForFrameJobs(id, 1);
    if (!job) throw new Error("no frame job");
    expect(job).toMatchObject({ priority: "interactive", time: 12.52, width: 320 });
    expect((await putFrame(job)).status).toBe(204);
    const first = await asked;
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/jpeg");
    expect(first.headers.get("access-control-allow-origin")).toBe("*");
    expect(new Uint8Array(await first.arrayBuffer())).toEqual(JPEG);
    // 12.5 s and 12.51 s are the same frame at 25 fps: read back, with no new job.
    const again = await api(`/play/${id}/thumbnail?time=12.51&width=320`);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(JPEG);
    expect(frameJobs(id)).toHaveLength(1);
    expect(await env.MEDIA.head(frameKey(project.id, id, 313, 320))).not.toBeNull();
    expect((await result(job)).status).toBe(204);
    // No width: the highest rendition's.
    void api(`/play/${id}/thumbnail?time=0`);
    const [, full] = await waitForFrameJobs(id, 2);
    expect(full).toMatchObject({ time: 0, width: 1280 });
  });

  it("refuses a time or width out of range or malformed with 400 invalid_query, after the video's own checks", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(20));
    for (const query of [
      "time=-1",
      "time=20.5",
      "time=abc",
      "time=",
      "time=1e1",
      "time=1&time=2",
      "time=1&width=15",
      "time=1&width=1281",
      "time=1&width=320.5",
      "time=1&width=",
    ]) {
      const response = await api(`/play/${id}/thumbnail?${query}`);
      expect(response.status, query).toBe(400);
      expect(await errorCode(response), query).toBe("invalid_query");
    }
    expect(frameJobs(id)).toHaveLength(0);
    // A private video's id URL is refused before its query is read.
    expect((await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })))).status).toBe(200);
    const refused = await api(`/play/${id}/thumbnail?time=abc`);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("playback_token_required");
  });

  it("says a frame that could not be made is not ready (503, Retry-After), and the video is untouched", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(20));
    const asked = api(`/play/${id}/thumbnail?time=3`);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const jobs = await waitForFrameJobs(id, attempt);
      expect((await failWith(jobs.at(-1) as (typeof jobs)[number], "encoding_failed")).status).toBe(204);
    }
    const answer = await asked;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(await errorCode(answer)).toBe("frame_not_ready");
    expect((await encodingState(id)).phase).toBe("encoding");
  });
});

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Job, segmentName } from "../../../media-plan/protocol.mjs";
import type { VideoEncoding } from "../../../src/encoding/pipeline/coordinator";
import { BACKGROUND_JOB_MS, MAX_TRIES, QUIET_MS, SILENCE_MS } from "../../../src/encoding/pipeline/coordinator-rules";
import { coordinatorOf } from "../../../src/encoding/pipeline/coordinator-stub";
import { sweepEncodings } from "../../../src/encoding/pipeline/sweeper";
import { m4aKey, mp4Key, posterKey, segmentKey, videoPrefix } from "../../../src/lib/storage-keys";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../../helpers";
import { runQueue } from "../../support/handlers";
import {
  callback,
  emptyPool,
  encodeMessages,
  encoding,
  encodingState,
  type FakeEncoder,
  failWith,
  fakeEncoder,
  finishAll,
  finishFilePart,
  finishJob,
  finishSegments,
  finishStill,
  jobsOf,
  lastJob,
  playable,
  probeFacts,
  putSegment,
  result,
  runEncodes,
  segmentBytes,
  stopEncodings,
  uploadedVideo,
} from "./support";

type Video = {
  id: string;
  status: string;
  duration: number | null;
  width: number | null;
  height: number | null;
  renditions: { resolution: string; width: number; height: number }[];
  playback: { hls: string; mp4: string | null; m4a: string | null } | null;
  error: { code: string; message: string } | null;
  thumbnail: { source: string; url: string };
};

let encoder: FakeEncoder;
beforeEach(async () => {
  encoder = fakeEncoder();
  await emptyPool();
});
afterEach(async () => {
  await stopEncodings();
  vi.restoreAllMocks();
});

async function video(key: string, id: string): Promise<Video> {
  return (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as Video;
}

async function outboxEvents(videoId: string) {
  const { results } = await env.DB.prepare(
    "SELECT type, payload FROM outbox_events WHERE subject_id = ? ORDER BY created_at",
  )
    .bind(videoId)
    .all<{ type: string; payload: string }>();
  return results.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

async function keysUnder(prefix: string): Promise<string[]> {
  return (await env.MEDIA.list({ prefix })).objects.map((object) => object.key);
}

/** Retries `check` until it passes (what the pool pushes arrives a moment after the call that freed it). */
async function eventually(check: () => unknown, ms = 2000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** `ms` pass in silence for the video's coordinator (its clock moves on), then its alarm runs. */
async function silence(videoId: string, ms: number) {
  const stub = coordinatorOf(env, videoId);
  await runInDurableObject(stub, (instance: VideoEncoding) => {
    const clock = instance.clock;
    instance.clock = () => clock() + ms;
  });
  await runDurableObjectAlarm(stub);
}

describe("starting an encoding", () => {
  it("completing an upload queues the video; its coordinator probes it on an interactive slot and it is processing", async () => {
    const { key, project } = await newWorkspace();
    const { id, probe } = await encoding(encoder, key);
    expect(encodeMessages()).toEqual([{ projectId: project.id, videoId: id }]);
    expect(probe).toMatchObject({
      version: 2,
      kind: "probe",
      priority: "interactive",
      callback: { baseUrl: `http://api.test/internal/encoding/${project.id}/${id}/${probe.jobId}` },
    });
    expect((await video(key, id)).status).toBe("processing");
    // A second message for the same video starts nothing more.
    await runEncodes([{ projectId: project.id, videoId: id }]);
    expect(jobsOf(encoder, id)).toHaveLength(1);
  });

  it("the encoder reads the source by byte ranges with its job's token; another token or job is 401", async () => {
    const { key } = await newWorkspace();
    const bytes = new TextEncoder().encode("the uploaded source, read by ranges");
    const { probe } = await encoding(encoder, key, bytes);
    const whole = await callback(probe, "source");
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);
    const ranged = await callback(probe, "source", { headers: { range: "bytes=4-11" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 4-11/${bytes.byteLength}`);
    expect(await ranged.text()).toBe("uploaded");
    const open = await callback(probe, "source", { headers: { range: "bytes=30-" } });
    expect(open.status).toBe(206);
    expect(await open.text()).toBe("anges");
    const past = await callback(probe, "source", { headers: { range: "bytes=999-" } });
    expect(past.status).toBe(416);
    expect((await callback(probe, "source", {}, "x".repeat(43))).status).toBe(401);
    const other = await api(new URL(`${probe.callback.baseUrl}x/source`).pathname, {
      headers: { authorization: `Bearer ${probe.callback.token}` },
    });
    expect(other.status).toBe(401);
  });

  it("a finished job's token reads the source no more: 410, as every other call of a job that is over", async () => {
    const { key } = await newWorkspace();
    const { probe } = await encoding(encoder, key);
    expect((await callback(probe, "source")).status).toBe(200);
    expect((await result(probe, { probe: probeFacts(8) })).status).toBe(204);
    const after = await callback(probe, "source", { headers: { range: "bytes=0-3" } });
    expect(after.status).toBe(410);
    expect(await errorCode(after)).toBe("encoding_job_void");
  });

  it("a video waits in uploaded while every interactive slot is taken, and starts when one frees", async () => {
    const { key } = await newWorkspace();
    const first = await encoding(encoder, key);
    const second = await encoding(encoder, key);
    const third = await uploadedVideo(key);
    await runEncodes([{ projectId: third.projectId, videoId: third.id }]);
    // Two interactive slots (vitest.config.ts): the third waits, uploaded, without a job.
    expect(jobsOf(encoder, third.id)).toHaveLength(0);
    expect((await video(key, third.id)).status).toBe("uploaded");
    expect((await video(key, second.id)).status).toBe("processing");
    await failWith(first.probe, "invalid_source", "Not a video.");
    // The pool tells the waiting video's coordinator of the freed slot as it frees.
    await eventually(() => expect(jobsOf(encoder, third.id, "probe")).toHaveLength(1));
    expect((await video(key, third.id)).status).toBe("processing");
  });
});

describe("playable before ready", () => {
  it("the probe's result makes the video playable: plan, complete playlists, video.playable once", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(10.2));
    const playing = await video(key, id);
    expect(playing).toMatchObject({
      status: "processing",
      duration: 10.2,
      width: 1280,
      height: 720,
      renditions: [],
      playback: { hls: `http://api.test/play/${id}/master.m3u8`, mp4: null, m4a: null },
    });
    const events = await outboxEvents(id);
    expect(events.map((event) => event.type)).toEqual(["video.playable"]);
    expect(events[0]?.payload.data).toEqual(playing);

    const master = await api(`/play/${id}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(master.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    const text = await master.text();
    expect(text).toContain('RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"');
    expect(text).toContain("RESOLUTION=1280x720");
    expect(text).not.toContain("1920x1080");
    const variant = await (await api(`/play/${id}/720p/index.m3u8`)).text();
    expect(variant).toContain("#EXT-X-PLAYLIST-TYPE:VOD");
    expect(variant.trim().endsWith("#EXT-X-ENDLIST")).toBe(true);
    const durations = [...variant.matchAll(/#EXTINF:([0-9.]+),/g)].map((m) => Number(m[1]));
    expect(durations).toEqual([4, 4, 2.2]);
    // Again, the same bytes and ETag; a conditional request is 304.
    const again = await api(`/play/${id}/master.m3u8`);
    expect(await again.text()).toBe(text);
    const etag = again.headers.get("etag") as string;
    expect(etag).toBe(master.headers.get("etag"));
    expect((await api(`/play/${id}/master.m3u8`, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await api(`/play/${id}/1080p/index.m3u8`)).status).toBe(404);
  });

  it("queues the poster first, then background runs of every rendition and the storyboard's tiles after the first, on the slots the pool grants", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(60));
    const poster = lastJob(encoder, id, "still");
    expect(poster).toMatchObject({ priority: "background", time: 1, width: null });
    // Two background slots (vitest.config.ts): the poster and the first run; 60 s of a 720p ladder
    // is 15 segments, in runs of 3 (a segment of a 1080p ladder's work). Beside them, on an
    // interactive slot, the lowest rendition's first segments: where a viewer starts.
    const runs = jobsOf(encoder, id, "segments");
    expect(runs.map((job) => [job.priority, job.kind === "segments" && [job.from, job.to, job.renditions]])).toEqual([
      ["interactive", [0, 3, ["360p"]]],
      ["background", [0, 3, ["360p", "720p"]]],
    ]);
    await finishStill(poster);
    expect(jobsOf(encoder, id, "tiles")).toMatchObject([{ from: 0, to: 6 }]);
    await finishSegments(lastJob(encoder, id, "segments"));
    const background = jobsOf(encoder, id, "segments").filter((job) => job.priority === "background");
    expect(background.map((job) => job.kind === "segments" && job.from)).toEqual([0, 3]);
  });

  it("cuts the next background run to what fits in BACKGROUND_JOB_MS at the pace the video's runs went", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(60));
    const first = lastJob(encoder, id, "segments");
    expect(first).toMatchObject({ from: 0, to: 3 });
    // The poster's slot goes to the storyboard's tiles, the first run's to the next run.
    await finishStill(lastJob(encoder, id, "still"));
    // The first run took 4 × BACKGROUND_JOB_MS for its 3 segments: the next makes one.
    for (const resolution of first.renditions) {
      for (let index = 0; index < 3; index++) expect((await putSegment(first, resolution, index)).status).toBe(204);
    }
    await runInDurableObject(coordinatorOf(env, id), (instance: VideoEncoding) => {
      const clock = instance.clock;
      instance.clock = () => clock() + 4 * BACKGROUND_JOB_MS;
    });
    expect((await result(first)).status).toBe(204);
    expect(lastJob(encoder, id, "segments")).toMatchObject({ from: 3, to: 4 });
    // The rest of that run waits as a unit of its own, just after it.
    const queued = (await encodingState(id)).units.filter((unit) => unit.kind === "segments" && unit.job === null);
    expect(queued[0]).toMatchObject({ id: "run-4", from: 4, to: 6 });
  });

  it("a segment asked for before it exists is made on demand, first, and the answer waits for it", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(600));
    const asked = api(`/play/${id}/360p/seg_00120.ts`);
    for (let i = 0; i < 50 && jobsOf(encoder, id, "segments").every((job) => job.priority !== "interactive"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const asking = (job: Job) => job.kind === "segments" && job.priority === "interactive" && job.from > 0;
    for (let i = 0; i < 50 && !jobsOf(encoder, id, "segments").some(asking); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const live = jobsOf(encoder, id, "segments").find(asking);
    expect(live).toMatchObject({ from: 120, to: 123, renditions: ["360p"] });
    if (live?.kind !== "segments") throw new Error("no live job");
    expect((await putSegment(live, "360p", 120)).status).toBe(204);
    const answer = await asked;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("video/mp2t");
    expect(new Uint8Array(await answer.arrayBuffer())).toEqual(segmentBytes("360p", 120, live.jobId));
    // The background runs where the viewer is come next.
    const state = await encodingState(id);
    const [next] = state.units.filter(
      (unit) => unit.kind === "segments" && unit.job === null && unit.rendition === null,
    );
    if (next?.kind !== "segments") throw new Error("no background run queued");
    expect(next.from).toBeLessThanOrEqual(120);
    expect(next.to).toBeGreaterThan(120);
  });

  it("a viewer who seeks elsewhere stops the jobs making segments ahead of where they were, which nobody waits on", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(600));
    // The first view (360p from 0) runs; nobody waits on it. A viewer asks for 720p at 100.
    const [first] = jobsOf(encoder, id, "segments").filter((job) => job.priority === "interactive");
    if (first?.kind !== "segments") throw new Error("no first view");
    const asked = api(`/play/${id}/720p/seg_00100.ts`);
    const at100 = (job: Job) => job.kind === "segments" && job.priority === "interactive" && job.from === 100;
    for (let i = 0; i < 50 && !jobsOf(encoder, id, "segments").some(at100); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(encoder.cancelled).toContain(first.jobId);
    expect((await putSegment(first, "360p", 0)).status).toBe(410);
    const live = jobsOf(encoder, id, "segments").find(at100);
    if (live?.kind !== "segments") throw new Error("no job for the viewer");
    expect((await putSegment(live, "720p", 100)).status).toBe(204);
    expect((await asked).status).toBe(200);
    // Playing on (101 continues it) stops nothing; its segments are made ahead.
    const next = api(`/play/${id}/720p/seg_00101.ts`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(encoder.cancelled).not.toContain(live.jobId);
    expect((await putSegment(live, "720p", 101)).status).toBe(204);
    expect((await next).status).toBe(200);
  });

  it("a segment's bytes never change once stored: another job's copy is dropped", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(20));
    const [run] = jobsOf(encoder, id, "segments");
    if (run?.kind !== "segments") throw new Error("no run");
    expect((await putSegment(run, "360p", 0)).status).toBe(204);
    const first = new Uint8Array(await (await api(`/play/${id}/360p/seg_00000.ts`)).arrayBuffer());
    const live = api(`/play/${id}/360p/seg_00001.ts`);
    let other = jobsOf(encoder, id, "segments").find((job) => job.priority === "interactive");
    for (let i = 0; i < 50 && !other; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      other = jobsOf(encoder, id, "segments").find((job) => job.priority === "interactive");
    }
    if (other?.kind !== "segments") throw new Error("no live job");
    expect((await putSegment(other, "360p", 1)).status).toBe(204);
    await live;
    // The run makes segment 1 too: dropped.
    expect((await putSegment(run, "360p", 1, segmentBytes("360p", 1, "later"))).status).toBe(204);
    const kept = new Uint8Array(await (await api(`/play/${id}/360p/seg_00001.ts`)).arrayBuffer());
    expect(kept).toEqual(segmentBytes("360p", 1, other.jobId));
    expect(new Uint8Array(await (await api(`/play/${id}/360p/seg_00000.ts`)).arrayBuffer())).toEqual(first);
  });
});

describe("ready", () => {
  it("once every segment, the poster and the MP4 are stored: ready with one video.ready after video.playable", async () => {
    const { key, session: cookie, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(cookie, json("PATCH", { enabledResolutions: ["360p", "720p"], mp4FallbackEnabled: true })),
    );
    const { id } = await playable(encoder, key, probeFacts(30));
    const masterBefore = await (await api(`/play/${id}/master.m3u8`)).text();
    await finishAll(encoder, id);
    const ready = await video(key, id);
    expect(ready).toMatchObject({
      status: "ready",
      duration: 30,
      renditions: [
        { resolution: "360p", width: 640, height: 360 },
        { resolution: "720p", width: 1280, height: 720 },
      ],
      playback: {
        hls: `http://api.test/play/${id}/master.m3u8`,
        mp4: `http://api.test/play/${id}/video.mp4`,
        m4a: `http://api.test/play/${id}/audio.m4a`,
      },
    });
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.playable", "video.ready"]);
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).toBe(masterBefore);
    const mp4 = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=0-1" } });
    expect(mp4.status).toBe(206);
    expect(await mp4.text()).toBe("an");
    const m4a = await api(`/play/${id}/audio.m4a`, { headers: { range: "bytes=3-5" } });
    expect(m4a.status).toBe(206);
    expect(m4a.headers.get("content-type")).toBe("audio/mp4");
    expect(await m4a.text()).toBe("m4a");
    // The MP4 and the M4A were made side by side (two background slots), once every segment was stored.
    const [mp4Job] = jobsOf(encoder, id, "mp4");
    const [m4aJob] = jobsOf(encoder, id, "m4a");
    expect(m4aJob).toMatchObject({ priority: "background", partSize: 5 * 1024 * 1024, part: 1, from: 0 });
    expect(m4aJob?.kind === "m4a" && m4aJob.plan.audio).toBe(true);
    expect(mp4Job).toBeDefined();
    const poster = await api(new URL(ready.thumbnail.url).pathname);
    expect(poster.status).toBe(200);
    expect(poster.headers.get("content-type")).toBe("image/jpeg");
    const { projectId } = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { projectId: string };
    expect(await keysUnder(videoPrefix(projectId, id))).toEqual(
      expect.arrayContaining([
        mp4Key(projectId, id),
        m4aKey(projectId, id),
        posterKey(projectId, id),
        segmentKey(projectId, id, "720p", segmentName(7)),
      ]),
    );
    // Everything the coordinator held is given back.
    expect((await encodingState(id)).slots).toEqual([]);
  });

  it("a silent source makes no M4A: ready without one, playback.m4a null and audio.m4a 404", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await playable(encoder, key, probeFacts(8, { audioStream: null }));
    await finishAll(encoder, id);
    const ready = await video(key, id);
    expect(ready.status).toBe("ready");
    expect(ready.playback).toEqual({ hls: `http://api.test/play/${id}/master.m3u8`, mp4: null, m4a: null });
    expect(jobsOf(encoder, id, "m4a")).toEqual([]);
    expect(await keysUnder(videoPrefix(projectId, id))).not.toContain(m4aKey(projectId, id));
    const answer = await api(`/play/${id}/audio.m4a`);
    expect(answer.status).toBe(404);
    expect(await errorCode(answer)).toBe("not_found");
  });

  it("makes the M4A a part per job: the first measures, the others follow, the first is written last with the index of the others", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(30));
    // Everything but the M4A, as the encoder would.
    for (let round = 0; round < 50 && jobsOf(encoder, id, "m4a").length === 0; round++) {
      const next = jobsOf(encoder, id).find((job) => job.kind !== "probe" && encoder.running.has(job.jobId));
      if (!next) break;
      encoder.running.delete(next.jobId);
      await finishJob(next);
    }
    const head = lastJob(encoder, id, "m4a");
    expect(head).toMatchObject({ part: 1, from: 0, to: null, sequence: 1, origin: null });
    // 30 s is 8 segments; the first part holds 3 of them, so it only measures them.
    const fragments = (n: number) => Array.from({ length: n }, (_, i) => ({ size: 8, times: [i] }));
    // R2 wants every part but the last one size, at least 5 MiB.
    const size = 5 * 1024 * 1024;
    await finishFilePart(head, new Uint8Array(size), { to: 3, fragments: fragments(2) });
    const second = lastJob(encoder, id, "m4a");
    expect(second).toMatchObject({ part: 2, from: 3, to: null, sequence: 3, origin: 0 });
    const part = (job: typeof second, body: string) =>
      callback(job, `m4a/parts/${job.part}`, { method: "PUT", body, headers: { "content-type": "audio/mp4" } });
    expect((await part(second, "B")).status).toBe(200);
    // An MP4 part, or the MP4's index, under the M4A's job is refused: the job makes no MP4.
    const asMp4 = callback(second, "mp4/parts/2", {
      method: "PUT",
      body: "x",
      headers: { "content-type": "video/mp4" },
    });
    expect((await asMp4).status).toBe(410);
    expect((await callback(second, "mp4/index")).status).toBe(410);
    // A failed part runs again (the parts made are kept); the failed job's calls are 410.
    await failWith(second, "encoding_failed");
    const again = lastJob(encoder, id, "m4a");
    expect(again).toMatchObject({ part: 2, from: 3, sequence: 3 });
    expect(again.jobId).not.toBe(second.jobId);
    expect((await part(second, "B")).status).toBe(410);
    await finishFilePart(again, new TextEncoder().encode("the rest"), { to: 8, fragments: fragments(3) });
    expect((await video(key, id)).status).toBe("processing");
    // The first part again, now with the index of the others.
    const last = lastJob(encoder, id, "m4a");
    expect(last).toMatchObject({ part: 1, from: 0, to: 3, sequence: 1, origin: null });
    expect(await (await callback(last, "m4a/index")).json()).toEqual({ fragments: fragments(3) });
    await finishFilePart(last, new Uint8Array(size).fill(65), { fragments: fragments(2) });
    expect((await video(key, id)).status).toBe("ready");
    const m4a = await api(`/play/${id}/audio.m4a`, { headers: { range: `bytes=${size - 2}-` } });
    expect(await m4a.text()).toBe("AAthe rest");
  });

  it("uses the settings as they were when the encoding started", async () => {
    const { key, session: cookie, project } = await newWorkspace();
    const { id, probe } = await encoding(encoder, key);
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(cookie, json("PATCH", { enabledResolutions: ["240p"], mp4FallbackEnabled: true })),
    );
    await result(probe, { probe: probeFacts(8) });
    const plan = (await encodingState(id)).plan;
    expect(plan?.renditions.map((r) => r.resolution)).toEqual(["360p", "720p"]);
    expect(plan?.mp4).toBe(false);
  });
});

describe("failures", () => {
  it("a source that is not a video errors the video at once with video.errored", async () => {
    const { key } = await newWorkspace();
    const { id, probe } = await encoding(encoder, key);
    expect((await failWith(probe, "invalid_source", "The source is not a decodable video: no video.")).status).toBe(
      204,
    );
    expect(await video(key, id)).toMatchObject({
      status: "errored",
      playback: null,
      error: { code: "invalid_source", message: "The source is not a decodable video: no video." },
    });
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.errored"]);
    // The job is over: further calls are 410.
    const beat = await callback(probe, "heartbeat", json("POST", { version: 2, jobId: probe.jobId, progress: 0.5 }));
    expect(beat.status).toBe(410);
  });

  it.each([
    ["a 100:1 pixel aspect (32000×240)", { width: 32000, height: 240 }, /16:1/],
    ["over 12 hours", { duration: 12 * 3600 + 60 }, /12 hours/],
  ])("a probe of %s errors the video invalid_source", async (_, extra, message) => {
    const { key } = await newWorkspace();
    const { id, probe } = await encoding(encoder, key);
    await result(probe, { probe: probeFacts(10, extra) });
    const errored = await video(key, id);
    expect(errored).toMatchObject({ status: "errored", error: { code: "invalid_source" } });
    expect(errored.error?.message).toMatch(message);
  });

  it("a failed run runs again from its first missing segment; after the last try the video errors encoding_failed", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(20));
    const first = lastJob(encoder, id, "segments");
    expect((await putSegment(first, "360p", first.from)).status).toBe(204);
    expect((await putSegment(first, "720p", first.from)).status).toBe(204);
    await failWith(first, "encoding_failed");
    const second = lastJob(encoder, id, "segments");
    expect(second.jobId).not.toBe(first.jobId);
    expect([second.from, second.to]).toEqual([first.from + 1, first.to]);
    for (let attempt = 2; attempt <= MAX_TRIES; attempt++) {
      await failWith(lastJob(encoder, id, "segments"), "encoding_failed");
    }
    const errored = await video(key, id);
    expect(errored).toMatchObject({
      status: "errored",
      error: { code: "encoding_failed", message: `The video could not be encoded: ${MAX_TRIES} attempts failed.` },
    });
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.playable", "video.errored"]);
    expect(encoder.cancelled).toEqual(expect.arrayContaining([lastJob(encoder, id, "still").jobId]));
  });

  it("a job its encoder interrupted (shutting down) runs again without counting a try; a probe's result without facts counts as failed", async () => {
    const { key } = await newWorkspace();
    const started = await encoding(encoder, key);
    // A done probe that says nothing is no plan: the probe runs again.
    expect((await result(started.probe)).status).toBe(204);
    const probe = lastJob(encoder, started.id, "probe");
    expect(probe.jobId).not.toBe(started.probe.jobId);
    expect((await result(probe, { probe: probeFacts(8) })).status).toBe(204);
    for (let i = 0; i < MAX_TRIES + 2; i++) {
      await failWith(lastJob(encoder, started.id, "segments"), "interrupted", "The encoder stopped.");
    }
    expect((await video(key, started.id)).status).toBe("processing");
    const state = await encodingState(started.id);
    expect(state.units.find((unit) => unit.kind === "segments")?.tries).toBe(0);
  });

  it("a job silent for a minute is taken over: stopped where it may run, and run again", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(8));
    const run = lastJob(encoder, id, "segments");
    await silence(id, SILENCE_MS + 1000);
    expect(encoder.cancelled).toContain(run.jobId);
    const again = lastJob(encoder, id, "segments");
    expect(again.jobId).not.toBe(run.jobId);
    expect(
      (await callback(run, "heartbeat", json("POST", { version: 2, jobId: run.jobId, progress: 0.5 }))).status,
    ).toBe(410);
  });

  it("a quiet job its encoder does not know (it restarted) is taken over after 15 s; a known one is left alone", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(8));
    const run = lastJob(encoder, id, "segments");
    await silence(id, QUIET_MS + 1000);
    expect(lastJob(encoder, id, "segments").jobId).toBe(run.jobId);
    encoder.forget();
    await silence(id, 0);
    expect(lastJob(encoder, id, "segments").jobId).not.toBe(run.jobId);
  });

  it("heartbeats keep a job; a malformed message is 400 in the API's words, an unknown job 410", async () => {
    const { key } = await newWorkspace();
    const { probe } = await encoding(encoder, key);
    const beat = (body: unknown) => callback(probe, "heartbeat", json("POST", body));
    expect((await beat({ version: 2, jobId: probe.jobId, progress: 0.2 })).status).toBe(204);
    const malformed = await beat({ version: 2, jobId: probe.jobId, progress: "half" });
    expect(malformed.status).toBe(400);
    const body = (await malformed.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({
      code: "invalid_body",
      message: "The body is not a protocol message (progress).",
    });
    const broken = await callback(
      probe,
      "result",
      json("POST", { version: 2, jobId: probe.jobId, status: "done", probe: { x: 1 } }),
    );
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { message: string } }).error.message).toBe(
      "The body is not a protocol message (probe.x).",
    );
  });
});

describe("deletes", () => {
  it("deleting a processing video stops its jobs, answers 410 to them, and leaves nothing in R2", async () => {
    const { key, project } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(20));
    const run = lastJob(encoder, id, "segments");
    expect((await putSegment(run, "360p", run.from)).status).toBe(204);
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(encoder.cancelled).toEqual(expect.arrayContaining([run.jobId]));
    expect((await putSegment(run, "360p", run.from + 1)).status).toBe(410);
    expect((await result(run)).status).toBe(410);
    expect(await keysUnder(videoPrefix(project.id, id))).toEqual([]);
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.playable", "video.deleted"]);
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(404);
  });

  it("a video deleted while it waits for a slot never starts", async () => {
    const { key } = await newWorkspace();
    await encoding(encoder, key);
    await encoding(encoder, key);
    const waiting = await uploadedVideo(key);
    await runEncodes([{ projectId: waiting.projectId, videoId: waiting.id }]);
    expect((await api(`/v1/videos/${waiting.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect((await encodingState(waiting.id)).phase).toBe("cancelled");
    expect(jobsOf(encoder, waiting.id)).toEqual([]);
  });
});

describe("deleting the project", () => {
  it("its purge stops every encoding before its objects go, and the jobs are told 410", async () => {
    const { key, session, project } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(20));
    const run = lastJob(encoder, id, "segments");
    const removed = await api(`/v1/projects/${project.id}`, withCookie(session, { method: "DELETE" }));
    expect(removed.status).toBe(204);
    const [message] = vi.mocked(env.PROJECT_DELETION_QUEUE.send).mock.calls.map(([body]) => body);
    await runQueue("project-deletions", [message]);
    expect(encoder.cancelled).toEqual(expect.arrayContaining([run.jobId]));
    expect((await encodingState(id)).phase).toBe("cancelled");
    expect((await putSegment(run, "360p", run.from)).status).toBe(410);
    expect(await keysUnder(videoPrefix(project.id, id))).toEqual([]);
  });
});

describe("the sweep", () => {
  it("starts a video left uploaded (its message was lost) and wakes an encoding not heard from", async () => {
    const { key } = await newWorkspace();
    const lost = await uploadedVideo(key);
    expect(jobsOf(encoder, lost.id)).toEqual([]);
    await sweepEncodings(env, Date.now() + 3 * 60_000);
    expect(jobsOf(encoder, lost.id, "probe")).toHaveLength(1);
  });
});

describe("the poster while processing", () => {
  it("is the automatic thumbnail as soon as its still is stored; a custom thumbnail stays the video's", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder, key, probeFacts(8));
    await finishStill(lastJob(encoder, id, "still"));
    const poster = await api(new URL((await video(key, id)).thumbnail.url).pathname);
    expect(poster.status).toBe(200);
    for (const job of jobsOf(encoder, id, "segments")) if (job.kind === "segments") await finishSegments(job);
    // Ready once the storyboard is stored too (its tiles, then its sprite), then the M4A (the
    // source has audio).
    expect((await video(key, id)).status).toBe("processing");
    await finishJob(lastJob(encoder, id, "tiles"));
    await finishJob(lastJob(encoder, id, "storyboard"));
    expect((await video(key, id)).status).toBe("processing");
    await finishJob(lastJob(encoder, id, "m4a"));
    expect((await video(key, id)).status).toBe("ready");
  });
});

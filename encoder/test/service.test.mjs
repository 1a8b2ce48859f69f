// @ts-check
// The encoder (node encoder/server.mjs, real ffmpeg) against a fake Worker, as a service: its
// token, what its probe finds and refuses, its room for jobs, failures told to the Worker, cancels
// and SIGTERM. Its outputs are checked in outputs.test.mjs.

import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planEncoding } from "../../media-plan/plan.mjs";
import { describeBinaries } from "../binaries.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { TOKEN } from "./fake-worker.mjs";
import { binaries, ENCODER_TOKEN, encoderHarness } from "./harness.mjs";

describe(`the encoder's service with a fake Worker (${describeBinaries(binaries)})`, () => {
  const bin = binaries;
  const h = encoderHarness();
  const { post, run, waitUntilIdle, planOf, segments } = h;

  it("answers /healthz without a token, refuses its job API without one, and logs the binaries it uses", async () => {
    const health = await fetch(`${h.encoder.origin}/healthz`);
    expect(await health.json()).toMatchObject({
      status: "ok",
      protocol: 2,
      capacity: { interactive: 2, background: 1 },
    });
    for (const authorization of [undefined, "Bearer wrong"]) {
      const response = await fetch(`${h.encoder.origin}/v2/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
      });
      expect(response.status).toBe(401);
    }
    expect((await fetch(`${h.encoder.origin}/v2/jobs/x`, { method: "DELETE" })).status).toBe(401);
    expect(h.encoder.lines.find((line) => line.startsWith("[encoder] using"))).toBe(
      `[encoder] using ${describeBinaries(bin)}`,
    );
  });

  it("will not start without a token", async () => {
    await expect(startEncoder({ ENCODER_TOKEN: "" })).rejects.toThrow(/ENCODER_TOKEN/);
  });

  it("probes a source through the Worker by byte ranges, never fetching it whole", async () => {
    const { jobId, result } = await run(h.sources.landscape, { kind: "probe" });
    expect(result).toMatchObject({
      status: "done",
      probe: { format: "mov", width: 640, height: 360, videoStream: 0, audioStream: 1, interlaced: false },
    });
    expect(result.status === "done" && result.probe?.duration).toBeCloseTo(3, 1);
    const reads = h.fake.calls.filter((call) => call.path === `/jobs/${jobId}/source`);
    expect(reads.length).toBeGreaterThan(1);
    expect(reads.every((call) => call.status === 206)).toBe(true);
  });

  it.each(
    /** @type {const} */ ([
      ["zero bytes", "zero", /format/],
      ["random bytes", "random", /format/],
      ["audio only", "audioOnly", /audio but no video/],
      ["an MP4 cut before its header", "truncated", /format/],
      ["an MP4 cut after its header, before any frame", "headerOnly", /decoded|format/],
      ["an HLS playlist naming a local file, followed by an MPEG-TS", "polyglot", /format/],
      ["a 40 ms Matroska file declaring 10 hours", "declaresTenHours", /declares 36000 s/],
    ]),
  )("reports invalid_source for %s", async (_, name, reason) => {
    const { result, job } = await run(h.sources[name], { kind: "probe" });
    expect(result).toMatchObject({ status: "failed", code: "invalid_source" });
    expect(result.status === "failed" && result.message).toMatch(/^The source is not a decodable video: .+\.$/);
    expect(result.status === "failed" && result.message).toMatch(reason);
    expect(job.stored).toEqual([]);
  });

  it("probes two frames at 1 fps, and a 100:1 pixel aspect as 32000×240 (which the plan refuses)", async () => {
    const two = await run(h.sources.twoFrames, { kind: "probe" });
    expect(two.result).toMatchObject({ status: "done", probe: { width: 320, height: 240, frameRate: 1 } });
    expect(two.result.status === "done" && two.result.probe?.duration).toBeCloseTo(2, 1);
    const wide = await run(h.sources.wide, { kind: "probe" });
    expect(wide.result).toMatchObject({ status: "done", probe: { width: 32000, height: 240 } });
  });

  it("plans a sparse source by the pictures it has: three pictures over 10 hours declared 60 fps make 1 fps", async () => {
    const { result } = await run(h.sources.sparse, { kind: "probe" });
    expect(result).toMatchObject({ status: "done", probe: { width: 64, height: 64 } });
    const probe = result.status === "done" ? result.probe : undefined;
    expect(probe?.duration).toBeCloseTo(36000, 0);
    expect(probe?.frameRate).toBeLessThan(1);
    const plan = planEncoding(/** @type {NonNullable<typeof probe>} */ (probe), {
      enabledResolutions: ["240p"],
      mp4: false,
      watermark: null,
    });
    expect(plan.frameRate).toEqual({ num: 1, den: 1 });
    expect(plan.frames).toBeLessThanOrEqual(36_001);
  });

  it("reports encoding_failed when a segment is refused, and retries one answered 503", async () => {
    const plan = await planOf(h.sources.silent, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const refused = await segments(h.sources.silent, plan, 0, 1, "refused", { onStore: () => 400 });
    expect(refused.result).toMatchObject({
      status: "failed",
      code: "encoding_failed",
      message: "The video could not be encoded.",
    });
    const mine = h.fake.calls.filter((call) => call.path.startsWith(`/jobs/${refused.jobId}/`));
    expect(mine.at(-1)?.path).toBe(`/jobs/${refused.jobId}/result`);
    // A 503 is retried.
    let answered = 0;
    const retried = await segments(h.sources.silent, plan, 0, 1, "retried", {
      onStore: () => (answered++ === 0 ? 503 : undefined),
    });
    expect(retried.result).toMatchObject({ status: "done" });
    const puts = h.fake.calls.filter((call) => call.path === `/jobs/${retried.jobId}/segments/180p/seg_00000.ts`);
    expect(puts.map((call) => call.status)).toEqual([503, 204]);
  });

  it("stops without a word when the Worker answers a heartbeat with 410", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    const { jobId, job, response } = await post(
      h.sources.long,
      { kind: "segments", plan, from: 0, to: 3, renditions: ["360p"] },
      { onHeartbeat: () => 410 },
    );
    expect(response.status).toBe(202);
    await waitUntilIdle();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(job.results).toEqual([]);
    expect(h.encoder.lines.some((line) => line.includes(`job ${jobId} (segments) cancelled`))).toBe(true);
  });

  it("refuses a malformed job with 400, naming the field", async () => {
    const post400 = (/** @type {string} */ body, type = "application/json") =>
      fetch(`${h.encoder.origin}/v2/jobs`, {
        method: "POST",
        headers: { "content-type": type, authorization: `Bearer ${ENCODER_TOKEN}` },
        body,
      });
    const response = await post400(
      JSON.stringify({
        version: 2,
        jobId: "bad",
        kind: "probe",
        priority: "soon",
        callback: { baseUrl: h.fake.origin, token: TOKEN },
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: "invalid_job", message: expect.stringContaining("priority"), path: "priority" },
    });
    expect((await post400("{")).status).toBe(400);
    expect((await post400("{}", "text/plain")).status).toBe(415);
  });

  it("runs as many jobs of a priority as it may (409 for a job it runs, 503 past its room) and cancels: ffmpeg killed, nothing sent", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p", "360p"], mp4: false, watermark: null });
    const background = { kind: "segments", priority: "background", plan, from: 0, to: 3, renditions: ["240p", "360p"] };
    const { jobId, job, response } = await post(h.sources.long, background);
    expect(response.status).toBe(202);
    for (let i = 0; i < 200 && h.encoder.children().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(h.encoder.children().length).toBeGreaterThan(0);
    const another = await post(h.sources.long, background);
    expect(another.response.status).toBe(503);
    expect(another.response.headers.get("retry-after")).toBe("2");
    const same = await fetch(`${h.encoder.origin}/v2/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ENCODER_TOKEN}` },
      body: JSON.stringify({
        version: 2,
        jobId,
        callback: { baseUrl: `${h.fake.origin}/jobs/${jobId}`, token: TOKEN },
        ...background,
      }),
    });
    expect(same.status).toBe(409);
    const status = await fetch(`${h.encoder.origin}/v2/jobs/${jobId}`, {
      headers: { authorization: `Bearer ${ENCODER_TOKEN}` },
    });
    expect(await status.json()).toMatchObject({ version: 2, jobId, kind: "segments" });
    const cancelled = await fetch(`${h.encoder.origin}/v2/jobs/${jobId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${ENCODER_TOKEN}` },
    });
    expect(cancelled.status).toBe(204);
    expect(h.encoder.children()).toEqual([]);
    await waitUntilIdle();
    const heartbeats = job.heartbeats.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(job.heartbeats.length).toBe(heartbeats);
    expect(job.results).toEqual([]);
  });

  it("stops its background work while a viewer's job runs, and continues it once that is over", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p", "360p"], mp4: false, watermark: null });
    const renditions = ["240p", "360p"];
    const run = await post(h.sources.long, {
      kind: "segments",
      priority: "background",
      plan,
      from: 0,
      to: 3,
      renditions,
    });
    expect(run.response.status).toBe(202);
    for (let i = 0; i < 200 && h.encoder.children().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const [ffmpeg] = h.encoder.children();
    if (ffmpeg === undefined) throw new Error("no ffmpeg for the background run");
    const state = () => readFileSync(`/proc/${ffmpeg}/stat`, "utf8").split(") ")[1]?.[0];
    expect(state()).not.toBe("T");
    const viewer = await post(h.sources.long, {
      kind: "segments",
      priority: "interactive",
      plan,
      from: 2,
      to: 3,
      renditions: ["240p"],
    });
    expect(viewer.response.status).toBe(202);
    // Stopped (T) as the viewer's job starts, and until it is over.
    expect(state()).toBe("T");
    expect(await viewer.job.resultReceived).toMatchObject({ status: "done" });
    for (let i = 0; i < 100 && state() === "T"; i++) await new Promise((r) => setTimeout(r, 10));
    expect(state()).not.toBe("T");
    expect(await run.job.resultReceived).toMatchObject({ status: "done" });
    await waitUntilIdle();
  });

  it("on SIGTERM interrupts its jobs, reports them interrupted so the Worker runs them again (no try counted), and exits", async () => {
    const second = await startEncoder({ ENCODER_TMPDIR: join(h.dir, "tmp"), ENCODER_TOKEN });
    try {
      const plan = await planOf(h.sources.long, { enabledResolutions: ["360p"], mp4: false, watermark: null });
      const { job, response } = await post(
        h.sources.long,
        { kind: "segments", plan, from: 0, to: 3, renditions: ["360p"] },
        {},
        second,
      );
      expect(response.status).toBe(202);
      for (let i = 0; i < 200 && second.children().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      process.kill(second.pid, "SIGTERM");
      expect(await job.resultReceived).toMatchObject({ status: "failed", code: "interrupted" });
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(await readdir(join(h.dir, "tmp"))).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});

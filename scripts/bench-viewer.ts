// The viewer's section of `npm run bench` (BENCH_ONLY=viewer): what a person watching a video sees
// on the local stack, on a 5-minute 720p30 source (360p and 720p, and the MP4), with where the
// time goes beside it:
// - playable: the completion's answer to `video.playable` (its timestamp);
// - first moving picture: the embed page opened in Chromium as soon as the video is playable,
//   then played: from `play()` to the first frame shown past the start (requestVideoFrameCallback);
// - seeks while it is processing: from setting `currentTime` to the first frame shown past the
//   target, at 75% of the video (and at 25%, 50% and 95%: "a seek anywhere");
// - ready against one ffmpeg run over the same source with the same plan (encoder/bench/direct.mjs);
// - the same first picture once it is ready;
// - CPU seconds per kind of job (every ffmpeg and ffprobe the encoder ran, sampled from /proc and
//   told apart by the job id in their arguments), the encoder's own, and workerd's (the Worker and
//   its Durable Objects, Miniflare's R2 and D1); each job's wall time from the encoder's log.
// Figures, not pass/fail; the machine's load average is printed beside them, since the machine
// may be shared.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { wholeRun } from "../encoder/bench/direct.mjs";
import { serveFile } from "../encoder/test/file-server.mjs";
import { launchChromium } from "../test/e2e/chromium.ts";
import { binaries, longClip, uploadFile } from "../test/e2e/media.ts";
import type { DevServer } from "../test/e2e/server.ts";
import { encodingTenant, eventOf, timedFfmpeg } from "./bench-encoding.ts";
import { CLOCK_TICKS, cpuSeconds, statOf, workerdPids } from "./proc.ts";

const SOURCE = { seconds: 300, width: 1280, height: 720, rate: 30, resolutions: ["360p", "720p"] };
/** Where the seeks go, as fractions of the duration; the issue's figure is the first. */
const SEEKS = [0.75, 0.25, 0.5, 0.95];

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
/**
 * Samples every process under the encoder every 100 ms: each ffmpeg or ffprobe's CPU time, kept
 * by the job its arguments name (the callback URL or the job's folder carry its id; the MP4's
 * remux reads and writes pipes, so it is known by its muxer flags). A process's last sample before
 * it ends is what counts: a process living less than the interval may be missed.
 */
function jobCpuSampler(encoderPid: number) {
  const perPid = new Map<number, { job: string; cpu: number }>();
  const sample = () => {
    const children = new Map<number, number[]>();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = statOf(Number(entry));
      if (!fields) continue;
      const parent = Number(fields[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    }
    const stack = [...(children.get(encoderPid) ?? [])];
    while (stack.length > 0) {
      const pid = stack.pop() as number;
      stack.push(...(children.get(pid) ?? []));
      let known = perPid.get(pid);
      if (!known) {
        let cmdline = "";
        try {
          cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        } catch {
          continue;
        }
        const job =
          /\/internal\/encoding\/[^/]+\/[^/]+\/([A-Za-z0-9_-]+)\//.exec(cmdline)?.[1] ??
          /encoder-([A-Za-z0-9_-]+)-[A-Za-z0-9]{6}\//.exec(cmdline)?.[1] ??
          (cmdline.includes("frag_keyframe") ? "the MP4's remux" : "unknown");
        known = { job, cpu: 0 };
        perPid.set(pid, known);
      }
      const fields = statOf(pid);
      if (fields) known.cpu = Math.max(known.cpu, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
    }
  };
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
    },
    /** CPU seconds by job id. */
    byJob() {
      const jobs = new Map<string, number>();
      for (const { job, cpu } of perPid.values()) jobs.set(job, (jobs.get(job) ?? 0) + cpu);
      return jobs;
    },
  };
}

/** The kind of unit a job id names (`<videoId>-<unit>-<n>`): probe, poster, run, storyboard, live, frame, mp4, m4a. */
function unitKind(jobId: string): string {
  const unit = jobId.replace(/^[0-9A-Z]{26}-/, "").replace(/-\d+$/, "");
  return /^(run|live|frame|tiles)/.exec(unit)?.[1] ?? unit;
}

/**
 * The server's output lines as they come, each with when it came (polled every 50 ms): what the
 * encoder did meanwhile, on the same clock as the viewer's steps.
 */
function outputLines(server: DevServer) {
  const lines: { at: number; line: string }[] = [];
  let seen = server.output().length;
  const timer = setInterval(() => {
    const output = server.output();
    const now = performance.now();
    for (const line of output.slice(seen).split("\n")) if (line.trim()) lines.push({ at: now, line });
    seen = output.length;
  }, 50);
  return {
    /** The encoder's job lines between `from` and `to` (performance.now()). */
    jobsBetween(from: number, to: number) {
      return lines.filter((l) => l.at >= from && l.at <= to + 100 && /\] job /.test(l.line));
    },
    stop: () => clearInterval(timer),
  };
}

/** The encoder's "job … done after N ms" lines of `videoId` in the server's output: wall ms by kind. */
function jobWalls(output: string, videoId: string) {
  const walls = new Map<string, { jobs: number; ms: number; longest: number }>();
  for (const match of output.matchAll(/\[encoder\] job (\S+) \(\w+\) \w+ after (\d+) ms/g)) {
    const [, jobId = "", ms = "0"] = match;
    if (!jobId.startsWith(videoId)) continue;
    const kind = unitKind(jobId);
    const row = walls.get(kind) ?? { jobs: 0, ms: 0, longest: 0 };
    walls.set(kind, { jobs: row.jobs + 1, ms: row.ms + Number(ms), longest: Math.max(row.longest, Number(ms)) });
  }
  return walls;
}

type Page = Awaited<ReturnType<Awaited<ReturnType<typeof launchChromium>>["newPage"]>>;

/**
 * What the page's `<video>` offers that the timings use (the scripts are type-checked without the
 * DOM's types; these functions run in Chromium).
 */
type PageVideo = {
  currentTime: number;
  muted: boolean;
  play(): Promise<void>;
  requestVideoFrameCallback(callback: (now: number, frame: { mediaTime: number }) => void): number;
};
type PageWindow = { document: { querySelector(selector: string): unknown } };

/** In the page: plays the video (muted) and resolves with the ms until a frame past its start is shown. */
function firstMovingPicture(page: Page) {
  return page.evaluate(async () => {
    const video = (globalThis as unknown as PageWindow).document.querySelector("video") as PageVideo;
    video.muted = true;
    const start = video.currentTime;
    const began = performance.now();
    await new Promise<void>((resolve, reject) => {
      const shown = (_now: number, frame: { mediaTime: number }) => {
        if (frame.mediaTime > start + 0.01) resolve();
        else video.requestVideoFrameCallback(shown);
      };
      video.requestVideoFrameCallback(shown);
      video.play().catch(reject);
    });
    return performance.now() - began;
  });
}

/** In the page: seeks to `target` seconds and resolves with the ms until a frame past it is shown. */
function seekMoving(page: Page, target: number) {
  return page.evaluate(async (to) => {
    const video = (globalThis as unknown as PageWindow).document.querySelector("video") as PageVideo;
    const began = performance.now();
    await new Promise<void>((resolve) => {
      const shown = (_now: number, frame: { mediaTime: number }) => {
        if (frame.mediaTime > to + 0.01) resolve();
        else video.requestVideoFrameCallback(shown);
      };
      video.requestVideoFrameCallback(shown);
      video.currentTime = to;
    });
    return performance.now() - began;
  }, target);
}

/**
 * Opens the embed page of `videoId` and times its first moving picture (and, with `seeks`, each
 * seek), with the segments the player fetched during each (what, and how long each took).
 */
async function watch(baseUrl: string, videoId: string, duration: number, seeks: number[]) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    let fetched: string[] = [];
    page.on("requestfinished", (request) => {
      const url = request.url();
      if (!url.endsWith(".ts")) return;
      // responseEnd counts from the request's start.
      fetched.push(`${url.split("/").slice(-2).join("/")} ${(request.timing().responseEnd / 1000).toFixed(2)} s`);
    });
    const response = await page.goto(`${baseUrl}/embed/${videoId}`, { waitUntil: "load" });
    if (response?.status() !== 200) throw new Error(`embed page: ${response?.status()}`);
    await page.waitForSelector("video");
    fetched = [];
    let began = performance.now();
    const firstMs = await firstMovingPicture(page);
    const steps = [{ what: "first picture", ms: firstMs, fetched, began }];
    const seekMs: { at: number; ms: number }[] = [];
    for (const at of seeks) {
      fetched = [];
      began = performance.now();
      const ms = await seekMoving(page, Math.floor(at * duration));
      seekMs.push({ at, ms });
      steps.push({ what: `seek to ${Math.round(at * 100)}%`, ms, fetched, began });
    }
    return { firstMs, seekMs, steps };
  } finally {
    await browser.close();
  }
}

/** The section: printed, and returned for .bench/results.json. */
export async function benchViewer(server: DevServer) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-viewer-"));
  const { tenant, receiver } = await encodingTenant(server.baseUrl);
  const encoderPid = Number(/\[dev\] encoder pid (\d+)/.exec(server.output())?.[1]);
  try {
    console.log(
      `\nviewer: a ${SOURCE.seconds / 60}-minute ${SOURCE.width}x${SOURCE.height}@${SOURCE.rate} source ` +
        `(${SOURCE.resolutions.join(", ")} and the MP4) on ${binaries.ffmpeg.from} ffmpeg ${binaries.ffmpeg.version}; load average ${load()}`,
    );
    const file = await longClip(SOURCE);
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { enabledResolutions: SOURCE.resolutions, mp4FallbackEnabled: true },
    });
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);

    const served = await serveFile(file);
    let direct: { ms: number; cpu: number };
    try {
      const whole = await wholeRun(binaries, {
        source: served.source,
        settings: { enabledResolutions: SOURCE.resolutions, mp4: true, watermark: null },
        watermark: null,
        out: path.join(dir, "direct"),
      });
      direct = await timedFfmpeg(whole.args);
    } finally {
      await served.close();
    }
    console.log(
      `  one ffmpeg over the whole file: ${seconds(direct.ms)}, ${direct.cpu.toFixed(0)} CPU-s; load ${load()}`,
    );

    const workerd = workerdPids(server.processGroup);
    const workerdBefore = workerd.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const encoderBefore = cpuSeconds(encoderPid);
    const sampler = jobCpuSampler(encoderPid);
    const trace = outputLines(server);
    const { video, completedAt } = await uploadFile(tenant.call, file);
    const playable = await eventOf(receiver, video.id, "video.playable");
    const playableMs = Date.parse(playable.timestamp) - completedAt;
    const duration = playable.data.duration ?? SOURCE.seconds;
    const processing = await watch(server.baseUrl, video.id, duration, SEEKS);
    const statusAfter = (await tenant.call("GET", `/v1/videos/${video.id}`)).json.status as string;
    const loadWhileProcessing = load();
    const ready = await eventOf(receiver, video.id, "video.ready");
    sampler.stop();
    const readyMs = Date.parse(ready.timestamp) - completedAt;
    const atReady = await watch(server.baseUrl, video.id, duration, []);

    const cpuByKind = new Map<string, number>();
    for (const [job, cpu] of sampler.byJob()) {
      const kind = job.startsWith(video.id) ? unitKind(job) : job;
      cpuByKind.set(kind, (cpuByKind.get(kind) ?? 0) + cpu);
    }
    const walls = jobWalls(server.output(), video.id);
    const encoderOwn = cpuSeconds(encoderPid) - encoderBefore;
    const workerdCpu = workerd.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - workerdBefore;
    const jobsCpu = [...cpuByKind.values()].reduce((sum, cpu) => sum + cpu, 0);
    const seek = (at: number) => processing.seekMs.find((s) => s.at === at)?.ms ?? Number.NaN;
    const row = {
      playableMs,
      firstPictureMs: processing.firstMs,
      seekAt75Ms: seek(0.75),
      seeks: processing.seekMs,
      worstSeekMs: Math.max(...processing.seekMs.map((s) => s.ms)),
      stillProcessing: statusAfter === "processing",
      readyMs,
      directMs: direct.ms,
      ratio: readyMs / direct.ms,
      firstPictureReadyMs: atReady.firstMs,
      directCpuSeconds: direct.cpu,
      jobsCpuSeconds: jobsCpu,
      cpuByKind: Object.fromEntries(cpuByKind),
      wallByKind: Object.fromEntries(walls),
      encoderOwnCpuSeconds: encoderOwn,
      workerdCpuSeconds: workerdCpu,
      load: loadWhileProcessing,
    };
    console.log(
      `  playable ${seconds(playableMs)} after the completion's answer (target <= 10 s)\n` +
        `  embed page, first moving picture ${seconds(processing.firstMs)} after play() while processing ` +
        `(target <= 1.5 s); once ready ${seconds(atReady.firstMs)}\n` +
        `  seeks while processing (${row.stillProcessing ? "still processing after them" : "it became ready meanwhile"}): ` +
        processing.seekMs.map((s) => `${Math.round(s.at * 100)}% ${seconds(s.ms)}`).join(", ") +
        ` (target <= 3 s anywhere)\n` +
        `  ready ${seconds(readyMs)}; one ffmpeg ${seconds(direct.ms)}; ready/ffmpeg ${row.ratio.toFixed(2)}x (target <= 1.5x); load while processing ${loadWhileProcessing}, now ${load()}\n` +
        `  CPU: one ffmpeg ${direct.cpu.toFixed(1)} s; the jobs' ffmpeg and ffprobe ${jobsCpu.toFixed(1)} s ` +
        `(${[...cpuByKind].map(([kind, cpu]) => `${kind} ${cpu.toFixed(1)}`).join(", ")}); ` +
        `the encoder's own ${encoderOwn.toFixed(1)} s; workerd ${workerdCpu.toFixed(1)} s\n` +
        `  jobs' wall time (encoder log): ` +
        [...walls].map(([kind, w]) => `${kind} ${w.jobs}× ${seconds(w.ms)} (longest ${seconds(w.longest)})`).join(", "),
    );
    trace.stop();
    for (const step of processing.steps) {
      console.log(`    ${step.what} (${seconds(step.ms)}): ${step.fetched.join(", ") || "nothing fetched"}`);
      for (const { at, line } of trace.jobsBetween(step.began, step.began + step.ms)) {
        console.log(`      +${seconds(at - step.began)} ${line.replace(/^.*\] job \S+?-(\S+) /, "$1 ")}`);
      }
    }
    rmSync(file, { force: true });
    return row;
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

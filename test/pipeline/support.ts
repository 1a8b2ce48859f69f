import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { readConfig } from "../../src/config";
import type { PipelineDeps } from "../../src/pipeline/attempts";
import { pipelineDeps } from "../../src/pipeline/deps";
import type { Job } from "../../src/pipeline/encoder";
import { ENCODE_QUEUE } from "../../src/pipeline/queue";
import { api, bearer, json, newVideo } from "../helpers";
import { runQueue } from "../support/handlers";

/**
 * A fake encoder at ENCODER_URL (http://encoder.test, vitest.config.ts): it records the jobs the
 * Worker starts and the jobs it cancels, and answers busy while `busy` is set. The tests then play
 * the encoder's part through the real callback routes.
 */
export function fakeEncoder() {
  const state = { jobs: [] as Job[], cancelled: [] as string[], busy: false };
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.host !== "encoder.test") return realFetch(input, init);
    if (request.method === "POST" && url.pathname === "/v1/jobs") {
      if (state.busy) return Response.json({ error: { code: "busy" } }, { status: 503 });
      state.jobs.push((await request.json()) as Job);
      return Response.json({ status: "accepted" }, { status: 202 });
    }
    if (request.method === "DELETE") {
      state.cancelled.push(url.pathname.split("/").at(-1) as string);
      return new Response(null, { status: 204 });
    }
    return new Response(null, { status: 404 });
  });
  return state;
}

/** A video whose upload is complete (status uploaded), its source `bytes`. */
export async function uploadedVideo(key: string, bytes: Uint8Array = new TextEncoder().encode("source bytes")) {
  const { video } = await newVideo(key, { title: "clip" });
  const part = await api(
    `/v1/videos/${video.id}/upload/parts/1`,
    bearer(key, { method: "PUT", body: bytes, headers: { "content-type": "application/octet-stream" } }),
  );
  const { etag } = (await part.json()) as { etag: string };
  const done = await api(
    `/v1/videos/${video.id}/upload/complete`,
    bearer(key, json("POST", { parts: [{ partNumber: 1, etag }] })),
  );
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${await done.text()}`);
  return video;
}

/** The encode messages the Worker sent since the test began. */
export function encodeMessages(): { projectId: string; videoId: string }[] {
  return vi.mocked(env.ENCODE_QUEUE.send).mock.calls.map(([body]) => body as { projectId: string; videoId: string });
}

/** Runs the encodings queue's handler over these messages, as the Queues runtime would. */
export function runEncodes(messages: { projectId: string; videoId: string }[]) {
  return runQueue(ENCODE_QUEUE, messages);
}

/** The pipeline's dependencies as the Worker builds them here. */
export function deps(): PipelineDeps {
  return pipelineDeps(env, readConfig(env));
}

/** One of the encoder's calls back about `job`, to `path` under its callback URL. */
export function callback(job: Job, path: string, init: RequestInit = {}, token = job.callback.token) {
  const base = new URL(job.callback.baseUrl).pathname;
  return api(`${base}/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
}

export function putOutput(job: Job, path: string, body: string | Uint8Array, type: string) {
  return callback(job, `outputs/${path}`, { method: "PUT", body, headers: { "content-type": type } });
}

export const MASTER = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\n360p/index.m3u8\n";
export const VARIANT =
  "#EXTM3U\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-TARGETDURATION:4\n#EXTINF:3.0,\nseg_00000.ts\n#EXT-X-ENDLIST\n";

/** Plays the encoder's whole part of a successful attempt: outputs, then the ready result. */
export async function finishReady(job: Job, options: { mp4?: Uint8Array } = {}) {
  const files: Record<string, [string | Uint8Array, string]> = {
    "360p/seg_00000.ts": [new Uint8Array(2048).fill(0x47), "video/mp2t"],
    "360p/index.m3u8": [VARIANT, "application/vnd.apple.mpegurl"],
    "master.m3u8": [MASTER, "application/vnd.apple.mpegurl"],
    "poster.jpg": [new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), "image/jpeg"],
    ...(options.mp4 ? { "video.mp4": [options.mp4, "video/mp4"] as [Uint8Array, string] } : {}),
  };
  for (const [path, [body, type]] of Object.entries(files)) {
    const stored = await putOutput(job, path, body, type);
    if (stored.status !== 204) throw new Error(`PUT ${path}: ${stored.status} ${await stored.text()}`);
  }
  return callback(
    job,
    "result",
    json("POST", {
      version: 1,
      jobId: job.jobId,
      attempt: job.attempt,
      status: "ready",
      duration: 3.02,
      width: 640,
      height: 360,
      hasAudio: true,
      renditions: [{ resolution: "360p", width: 640, height: 360 }],
      files: Object.keys(files),
      mp4: Boolean(options.mp4),
      poster: "poster.jpg",
      peakMemoryBytes: null,
    }),
  );
}

export function failWith(job: Job, code: "invalid_source" | "encoding_failed", message = "It failed.") {
  return callback(
    job,
    "result",
    json("POST", { version: 1, jobId: job.jobId, attempt: job.attempt, status: "failed", code, message }),
  );
}

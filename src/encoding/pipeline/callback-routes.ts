import { type Context, Hono } from "hono";
import {
  MAX_MESSAGE_BYTES,
  MAX_REQUEST_BYTES,
  MAX_SPEECH_SECONDS,
  ProtocolError,
  parseHeartbeat,
  parseResult,
  segmentIndex,
} from "../../../media-plan/protocol.mjs";
import { serveR2Object } from "../../http/bytes";
import type { AppEnv } from "../../http/context";
import { bearerToken } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import { logError } from "../../lib/log";
import { segmentKey, watermarkCopyKey } from "../../lib/storage-keys";
import { parseUlid } from "../../lib/ulid";
import { hearWithWhisper } from "../../speech/whisper";
import { CALLBACK_PATH, encodingContext, isCallbackToken, type JobPath } from "./context";
import { coordinatorOf } from "./coordinator-stub";

/**
 * A speech job's audio: its chunk and a second on each side of 16 kHz mono 16-bit WAV (1 MiB for 32 s),
 * with room for the header.
 */
const MAX_SPEECH_AUDIO_BYTES = (MAX_SPEECH_SECONDS + 2) * 16_000 * 2 + 4096;
/** A result lists at most 10,000 MP4 (or M4A) parts, so it may be larger than the protocol's other messages. */
const MAX_RESULT_BYTES = 4 * 1024 * 1024;
const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
const RESOLUTION = /^[1-9][0-9]{0,4}p$/;

type JobEnv = AppEnv & { Variables: { job: JobPath } };
const PATH = `${CALLBACK_PATH}/:projectId/:videoId/:jobId`;

/**
 * The encoder's side of a job (media-plan/PROTOCOL.md, "Encoder → Worker"): it reads the source (by
 * range) and the watermark, stores segments, stills, storyboard tiles (and reads them back for the
 * sprite) and the parts of the MP4 and the M4A (and reads the index of the parts made for the
 * first one), reports progress and the result, all through these routes, so it needs no storage
 * credentials. Each call carries the job's own
 * token, and the video's coordinator says whether the job still runs; a call about a job that is
 * over (video deleted, job taken over or ended) answers `410`, which stops the encoder. Not part
 * of the public API (absent from the OpenAPI document).
 */
export const callbackRoutes = new Hono<JobEnv>()
  .use(`${PATH}/*`, async (c, next) => {
    const projectId = parseUlid(c.req.param("projectId"));
    const videoId = parseUlid(c.req.param("videoId"));
    const jobId = c.req.param("jobId");
    const token = bearerToken(c.req.header("authorization"));
    const job = projectId && videoId && JOB_ID.test(jobId) ? { projectId, videoId, jobId } : null;
    if (!job || !token || !(await isCallbackToken(c.var.config.callbackSecret, job, token)))
      throw new ApiError("unauthorized");
    c.set("job", job);
    await next();
  })
  .get(`${PATH}/source`, async (c) => {
    // Only while the job runs, as every other call: a token outlives its job (it signs the job's
    // path, for ever), and must not read the source once the job is over.
    const { sourceKey } = await running(c);
    return objectResponse(c.env.MEDIA, sourceKey, c.req.raw);
  })
  .get(`${PATH}/watermark`, async (c) => {
    const { video, watermarkKey } = await running(c);
    if (!watermarkKey) throw new ApiError("not_found");
    // The video's own copy of the image its settings named (kept when its encoding started), or the
    // image itself where no copy could be kept.
    const copy = watermarkCopyKey(video.projectId, video.videoId);
    const key = (await c.env.MEDIA.head(copy)) ? copy : watermarkKey;
    return objectResponse(c.env.MEDIA, key, c.req.raw);
  })
  .get(`${PATH}/segments/:resolution/:name`, async (c) => {
    const { video } = await running(c);
    const { resolution, name } = segmentParams(c);
    return objectResponse(c.env.MEDIA, segmentKey(video.projectId, video.videoId, resolution, name), c.req.raw);
  })
  .put(`${PATH}/segments/:resolution/:name`, (c) => {
    const { videoId, jobId } = c.var.job;
    const { resolution, index } = segmentParams(c);
    const coordinator = coordinatorOf(c.env, videoId);
    return storeSegment(c, {
      reserve: () => coordinator.reserveSegment(jobId, resolution, index),
      stored: () => coordinator.segmentStored(jobId, resolution, index),
      abandoned: () => coordinator.segmentAbandoned(jobId, resolution, index),
    });
  })
  // A segment of the added audio track an audio job makes (docs/audio-tracks.md): the coordinator
  // knows which track, and under which generation it is stored.
  .put(`${PATH}/audio/:name`, (c) => {
    const { videoId, jobId } = c.var.job;
    const index = segmentIndex(c.req.param("name") ?? "");
    if (index === null) throw new ApiError("not_found");
    const coordinator = coordinatorOf(c.env, videoId);
    return storeSegment(c, {
      reserve: () => coordinator.reserveAudioSegment(jobId, index),
      stored: () => coordinator.audioSegmentStored(jobId, index),
      abandoned: () => coordinator.audioSegmentAbandoned(jobId, index),
    });
  })
  .put(`${PATH}/still`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const body = boundedBody(c);
    const coordinator = coordinatorOf(c.env, videoId);
    const { verdict, key } = await coordinator.reserveStill(jobId);
    if (verdict === "void") throw new ApiError("encoding_job_void");
    if (verdict === "skip") {
      // A frame stored already keeps the bytes it was served with.
      await body.cancel();
      return c.body(null, 204);
    }
    await c.env.MEDIA.put(key, body, { httpMetadata: { contentType: "image/jpeg" } });
    if ((await coordinator.stillStored(jobId)) === "void") {
      await c.env.MEDIA.delete(key);
      throw new ApiError("encoding_job_void");
    }
    return c.body(null, 204);
  })
  .put(`${PATH}/tiles/:cue`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const cue = cueParam(c);
    const body = boundedBody(c);
    const coordinator = coordinatorOf(c.env, videoId);
    const { verdict, key } = await coordinator.reserveTile(jobId, cue);
    if (verdict === "void") throw new ApiError("encoding_job_void");
    if (verdict === "skip") {
      // That frame is stored already (a viewer asked for it): it keeps the bytes it was served with.
      await body.cancel();
      return c.body(null, 204);
    }
    await c.env.MEDIA.put(key, body, { httpMetadata: { contentType: "image/jpeg" } });
    if ((await coordinator.tileStored(jobId, cue)) === "void") {
      await c.env.MEDIA.delete(key);
      throw new ApiError("encoding_job_void");
    }
    return c.body(null, 204);
  })
  .get(`${PATH}/tiles/:cue`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const key = await coordinatorOf(c.env, videoId).tileKey(jobId, cueParam(c));
    if (!key) throw new ApiError("encoding_job_void");
    return objectResponse(c.env.MEDIA, key, c.req.raw);
  })
  .get(`${PATH}/:file{mp4|m4a}/index`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const fragments = await coordinatorOf(c.env, videoId).fileIndex(
      jobId,
      c.req.param("file") === "m4a" ? "m4a" : "mp4",
    );
    if (!fragments) throw new ApiError("encoding_job_void");
    return c.json({ fragments });
  })
  .put(`${PATH}/:file{mp4|m4a}/parts/:part`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const file = c.req.param("file") === "m4a" ? "m4a" : "mp4";
    const part = Number(c.req.param("part"));
    if (!Number.isInteger(part) || part < 1 || part > 10_000) throw new ApiError("not_found");
    const body = boundedBody(c);
    const upload = await coordinatorOf(c.env, videoId).fileUpload(jobId, file);
    if (!upload) throw new ApiError("encoding_job_void");
    const uploaded = await c.env.MEDIA.resumeMultipartUpload(upload.key, upload.uploadId).uploadPart(part, body);
    return c.json({ etag: uploaded.etag });
  })
  // A speech job's audio, heard here when the engine is the Worker's (Workers AI): the words, their
  // times in seconds of this audio (docs/generated-captions.md).
  .put(`${PATH}/speech`, async (c) => {
    const { speech } = await running(c);
    if (speech?.recognizer !== "worker") throw new ApiError("encoding_job_void");
    const length = Number(c.req.header("content-length") ?? Number.NaN);
    if (!Number.isSafeInteger(length))
      throw new ApiError("invalid_body", { message: "The audio needs a Content-Length." });
    if (length > MAX_SPEECH_AUDIO_BYTES) throw new ApiError("payload_too_large");
    const audio = new Uint8Array(await c.req.arrayBuffer());
    if (audio.byteLength > MAX_SPEECH_AUDIO_BYTES) throw new ApiError("payload_too_large");
    return c.json({ words: await hearWithWhisper(c.env.AI, audio, speech.heardAs) });
  })
  .post(`${PATH}/heartbeat`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const heartbeat = await message(c, parseHeartbeat, MAX_MESSAGE_BYTES);
    if (heartbeat.jobId !== jobId) throw new ApiError("invalid_body");
    const slot = await coordinatorOf(c.env, videoId).heartbeat(jobId);
    if (slot === null) throw new ApiError("encoding_job_void");
    const { encoder } = encodingContext(c.env);
    c.executionCtx.waitUntil(
      encoder.keepAlive(slot).catch((error) => logError("encoding: keep alive", error, { videoId, slot })),
    );
    return c.body(null, 204);
  })
  .post(`${PATH}/result`, async (c) => {
    const { videoId, jobId } = c.var.job;
    const result = await message(c, parseResult, MAX_RESULT_BYTES);
    if (result.jobId !== jobId) throw new ApiError("invalid_body");
    if (!(await coordinatorOf(c.env, videoId).jobResult(jobId, result))) throw new ApiError("encoding_job_void");
    return c.body(null, 204);
  });

/**
 * Stores the segment the request carries, as the coordinator says (`reserve`): under its key, or
 * not at all when it is stored already (another job made it first: its bytes stay as they were
 * served), or `410` when the job is void. Stored, it is reported (`stored`); a delete that landed
 * while it was on its way voids it, and it goes now (the delete's own clean-up may have listed the
 * prefix before it arrived). A store that fails gives the reservation back (`abandoned`).
 */
async function storeSegment(
  c: Context<JobEnv>,
  coordinator: {
    reserve: () => Promise<{ verdict: "store" | "skip" | "void"; key: string }>;
    stored: () => Promise<"ok" | "void">;
    abandoned: () => Promise<void>;
  },
): Promise<Response> {
  const body = boundedBody(c);
  const { verdict, key } = await coordinator.reserve();
  if (verdict === "void") throw new ApiError("encoding_job_void");
  if (verdict === "skip") {
    await body.cancel();
    return c.body(null, 204);
  }
  try {
    await c.env.MEDIA.put(key, body, { httpMetadata: { contentType: "video/mp2t" } });
  } catch (error) {
    await coordinator.abandoned();
    throw error;
  }
  if ((await coordinator.stored()) === "void") {
    await c.env.MEDIA.delete(key);
    throw new ApiError("encoding_job_void");
  }
  return c.body(null, 204);
}

/** The job, while its coordinator still runs it; else it is void. */
async function running(c: Context<JobEnv>) {
  const { videoId, jobId } = c.var.job;
  const job = await coordinatorOf(c.env, videoId).job(jobId);
  if (!job) throw new ApiError("encoding_job_void");
  return job;
}

function segmentParams(c: Context<JobEnv>) {
  const resolution = c.req.param("resolution") ?? "";
  const name = c.req.param("name") ?? "";
  const index = segmentIndex(name);
  if (!RESOLUTION.test(resolution) || index === null) throw new ApiError("not_found");
  return { resolution, name, index };
}

/** A storyboard tile's cue from the path (`tiles/<cue>`). */
function cueParam(c: Context<JobEnv>): number {
  const cue = Number(c.req.param("cue"));
  if (!Number.isInteger(cue) || cue < 0 || cue > 10_000) throw new ApiError("not_found");
  return cue;
}

/**
 * The request's body, which must say its length (R2 stores only a stream of known length) and be
 * at most MAX_REQUEST_BYTES.
 */
function boundedBody(c: Context<JobEnv>): ReadableStream {
  const length = Number(c.req.header("content-length") ?? Number.NaN);
  if (!Number.isSafeInteger(length) || !c.req.raw.body) {
    throw new ApiError("invalid_body", { message: "An upload needs a body with a Content-Length." });
  }
  if (length > MAX_REQUEST_BYTES) throw new ApiError("payload_too_large");
  return c.req.raw.body;
}

/**
 * An R2 object as the encoder reads it: whole, or the one byte range its `Range` header asks for
 * (ffmpeg reads the source by ranges as it seeks), as every file is served (`http/bytes.ts`).
 */
function objectResponse(media: R2Bucket, key: string, request: Request): Promise<Response> {
  return serveR2Object(media, key, request, {});
}

/** A protocol message: JSON of at most `maxBytes` that `parse` accepts, else `400 invalid_body`. */
async function message<T>(c: Context<JobEnv>, parse: (value: unknown) => T, maxBytes: number): Promise<T> {
  const text = await c.req.text();
  if (new TextEncoder().encode(text).byteLength > maxBytes) throw new ApiError("payload_too_large");
  try {
    return parse(JSON.parse(text));
  } catch (error) {
    const at = error instanceof ProtocolError ? ` (${error.path || "message"})` : "";
    throw new ApiError("invalid_body", { message: `The body is not a protocol message${at}.` });
  }
}

import { type Context, Hono } from "hono";
import { isOutputPath, MAX_MESSAGE_BYTES, parseHeartbeat, parseResult } from "../../encoder/protocol.mjs";
import type { AppEnv } from "../http/context";
import { bearerToken } from "../http/credentials";
import { ApiError } from "../http/errors";
import { logError } from "../lib/log";
import { encodeOutputKey, watermarkCopyKey } from "../lib/storage-keys";
import { parseUlid } from "../lib/ulid";
import type { VideoRow } from "../videos/model";
import { CALLBACK_PATH, endWith, isCallbackToken, settingsOf } from "./attempts";
import { pipelineDeps } from "./deps";
import { recordHeartbeat, runningAttempt } from "./queries";

/**
 * A result lists every file the attempt stored (up to 100,000 paths: hours of video at every
 * resolution), so it may be larger than the protocol's other messages (MAX_MESSAGE_BYTES).
 */
const MAX_RESULT_BYTES = 4 * 1024 * 1024;

type AttemptEnv = AppEnv & { Variables: { attempt: { videoId: string; number: number } } };

/**
 * The encoder's side of an attempt (encoder/PROTOCOL.md, "Encoder → Worker"): it reads the source
 * and the watermark, stores its outputs, reports progress and the result, all through these
 * routes, so it needs no storage credentials. Each call carries the attempt's own token; a call
 * about an attempt that is over (video deleted, attempt taken over or ended) answers `410`, which
 * stops the encoder. Not part of the public API (absent from the OpenAPI document).
 */
export const callbackRoutes = new Hono<AttemptEnv>()
  .use(`${CALLBACK_PATH}/:videoId/:attempt/*`, async (c, next) => {
    const videoId = parseUlid(c.req.param("videoId"));
    const number = Number(c.req.param("attempt"));
    const token = bearerToken(c.req.header("authorization"));
    if (
      !videoId ||
      !Number.isInteger(number) ||
      number < 1 ||
      !token ||
      !(await isCallbackToken(c.var.config.callbackSecret, videoId, number, token))
    ) {
      throw new ApiError("unauthorized");
    }
    c.set("attempt", { videoId, number });
    await next();
  })
  .get(`${CALLBACK_PATH}/:videoId/:attempt/source`, async (c) => {
    const row = await running(c);
    return objectResponse(await c.env.MEDIA.get(row.source_key));
  })
  .get(`${CALLBACK_PATH}/:videoId/:attempt/watermark`, async (c) => {
    const row = await running(c);
    const key = settingsOf(row).watermark?.imageKey;
    if (!key) throw new ApiError("not_found");
    // The video's own copy of the image its settings named (kept when the first attempt started),
    // or the image itself where no copy could be kept.
    const object = (await c.env.MEDIA.get(watermarkCopyKey(row.project_id, row.id))) ?? (await c.env.MEDIA.get(key));
    return objectResponse(object);
  })
  .put(`${CALLBACK_PATH}/:videoId/:attempt/outputs/*`, async (c) => {
    const row = await running(c);
    const prefix = `${CALLBACK_PATH}/${c.req.param("videoId")}/${c.req.param("attempt")}/outputs/`;
    const path = new URL(c.req.url).pathname.slice(prefix.length);
    const type = c.req.header("content-type");
    const length = Number(c.req.header("content-length") ?? Number.NaN);
    // Paths are plain names (no escapes), and R2 stores a stream of a known length only.
    if (!isOutputPath(path) || !type || !Number.isSafeInteger(length) || !c.req.raw.body) {
      throw new ApiError("invalid_body", {
        message: "An output needs a valid path, a Content-Type and a Content-Length.",
      });
    }
    const key = encodeOutputKey(row.project_id, row.id, row.encode_attempt, path);
    await c.env.MEDIA.put(key, c.req.raw.body, { httpMetadata: { contentType: type } });
    // A delete or a takeover that landed while the file was on its way: it is never served, so it
    // goes now (the delete's own clean-up may have listed the prefix before it arrived).
    if (!(await runningAttempt(c.var.db, row.id, row.encode_attempt))) {
      await c.env.MEDIA.delete(key);
      throw new ApiError("encoding_attempt_void");
    }
    return c.body(null, 204);
  })
  .post(`${CALLBACK_PATH}/:videoId/:attempt/heartbeat`, async (c) => {
    const { videoId, number } = c.var.attempt;
    const heartbeat = await message(c, parseHeartbeat, MAX_MESSAGE_BYTES);
    if (heartbeat.jobId !== videoId || heartbeat.attempt !== number) throw new ApiError("invalid_body");
    if (!(await recordHeartbeat(c.var.db, videoId, number, Date.now()))) throw new ApiError("encoding_attempt_void");
    const { encoder } = pipelineDeps(c.env, c.var.config, c.var.db);
    c.executionCtx.waitUntil(
      encoder.keepAlive(videoId).catch((error) => logError("encoding: keep alive", error, { videoId })),
    );
    return c.body(null, 204);
  })
  .post(`${CALLBACK_PATH}/:videoId/:attempt/result`, async (c) => {
    const row = await running(c);
    const result = await message(c, parseResult, MAX_RESULT_BYTES);
    if (result.jobId !== row.id || result.attempt !== row.encode_attempt) throw new ApiError("invalid_body");
    const deps = pipelineDeps(c.env, c.var.config, c.var.db);
    const ended =
      result.status === "ready"
        ? await endWith(deps, row, {
            status: "ready",
            outcome: {
              status: "ready",
              duration: result.duration,
              width: result.width,
              height: result.height,
              renditions: result.renditions,
              mp4: result.mp4,
            },
          })
        : await endWith(deps, row, { status: "failed", code: result.code, message: result.message });
    if (!ended) throw new ApiError("encoding_attempt_void");
    return c.body(null, 204);
  });

/** The video, while the path's attempt is the one running it; else the attempt is void. */
async function running(c: Context<AttemptEnv>): Promise<VideoRow> {
  const { videoId, number } = c.var.attempt;
  const row = await runningAttempt(c.var.db, videoId, number);
  if (!row) throw new ApiError("encoding_attempt_void");
  return row;
}

function objectResponse(object: R2ObjectBody | null): Response {
  if (!object) throw new ApiError("not_found");
  const headers = new Headers({ "content-length": String(object.size) });
  object.writeHttpMetadata(headers);
  return new Response(object.body, { headers });
}

/** A protocol message: JSON of at most `maxBytes` that `parse` accepts, else `400 invalid_body`. */
async function message<T>(c: Context<AttemptEnv>, parse: (value: unknown) => T, maxBytes: number): Promise<T> {
  const text = await c.req.text();
  if (new TextEncoder().encode(text).byteLength > maxBytes) throw new ApiError("payload_too_large");
  try {
    return parse(JSON.parse(text));
  } catch (error) {
    throw new ApiError("invalid_body", { message: `Not a protocol message: ${String(error).slice(0, 200)}` });
  }
}

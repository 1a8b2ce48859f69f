import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { logError } from "../lib/log";
import type { AppEnv } from "./context";

/**
 * Every error code the API answers with, its HTTP status, and the headers that come with it. The
 * OpenAPI document reads this too.
 */
export const ERRORS = {
  invalid_body: { status: 400, message: "The request body is not valid." },
  invalid_project_id: { status: 400, message: "projectId must be the ULID of a project." },
  invalid_name: { status: 400, message: "name must be 1 to 100 characters without control characters." },
  invalid_parts: {
    status: 400,
    message: "Every part but the last must be one size, at least 5 MiB (5,242,880 bytes); the last may be smaller.",
  },
  invalid_image: { status: 400, message: "The body is not a well-formed image of the declared type." },
  invalid_captions: {
    status: 400,
    message:
      "The caption track is not valid: a BCP 47 language, and UTF-8 WebVTT or SubRip whose cues are in order, none ending before it starts.",
  },
  language_not_supported: {
    status: 400,
    message: "Captions cannot be generated in this language: the speech engine does not hear it.",
  },
  invalid_state: { status: 400, message: "state must be one of pending, succeeded, failed." },
  invalid_limit: { status: 400, message: "limit must be an integer from 1 to 100." },
  invalid_cursor: { status: 400, message: "cursor is not one this API issued." },
  invalid_query: { status: 400, message: "A query parameter has a value outside its allowed set." },
  invalid_idempotency_key: { status: 400, message: "Idempotency-Key must be 1 to 255 printable ASCII characters." },
  invalid_encoding_settings: { status: 400, message: "The encoding settings are not valid." },
  codec_unavailable: { status: 400, message: "Only the h264 codec is available." },
  unauthorized: { status: 401, message: "A valid credential is required." },
  invalid_credentials: { status: 401, message: "The email or password is wrong." },
  account_not_approved: { status: 403, message: "The account has not been approved yet." },
  insufficient_scope: { status: 403, message: "The API key lacks the scope this operation needs." },
  forbidden_origin: { status: 403, message: "This origin may not make cookie-authenticated writes." },
  playback_token_required: {
    status: 403,
    message: "This video is private: play it through a playback token's URLs (POST /v1/videos/{id}/playback-tokens).",
  },
  invalid_playback_token: { status: 403, message: "The playback token is not valid or has expired." },
  origin_not_allowed: { status: 403, message: "This video may not be played from this origin." },
  not_found: { status: 404, message: "Not found." },
  video_not_found: { status: 404, message: "No such video." },
  endpoint_not_found: { status: 404, message: "No such webhook endpoint." },
  upload_not_found: { status: 404, message: "No such direct upload." },
  captions_not_found: { status: 404, message: "The video has no caption track in this language." },
  audio_track_not_found: { status: 404, message: "The video has no added audio track in this language." },
  method_not_allowed: { status: 405, message: "This method is not allowed on this path." },
  email_taken: { status: 409, message: "An account with this email already exists." },
  upload_completion_in_progress: {
    status: 409,
    message: "An upload completion is in flight for this video.",
  },
  upload_not_active: { status: 409, message: "The video has no active upload session." },
  video_not_ready: {
    status: 409,
    message: "The video is not far enough for this: its source must be stored and probed, and it must not be errored.",
  },
  endpoint_disabled: { status: 409, message: "The webhook endpoint is disabled; enable it first." },
  idempotency_key_in_use: {
    status: 409,
    message: "A request with this Idempotency-Key is still running; retry after it answers.",
    headers: ["Retry-After"],
  },
  captions_exist: {
    status: 409,
    message: "The video has an uploaded caption track in this language: delete it first to generate one.",
  },
  quota_exceeded: { status: 409, message: "The project already holds as many of these as it may." },
  original_audio: {
    status: 409,
    message: "This is the language of the video's own audio, which cannot be replaced or deleted.",
  },
  encoding_job_void: {
    status: 410,
    message: "This encoding job is over (the video was deleted, or the job was taken over): stop.",
  },
  precondition_failed: { status: 412, message: "The resource changed since the given ETag." },
  payload_too_large: { status: 413, message: "The request body is too large." },
  range_not_satisfiable: { status: 416, message: "The requested range is outside the file." },
  unsupported_media_type: { status: 415, message: "This content type is not supported here." },
  idempotency_key_reused: {
    status: 422,
    message: "This Idempotency-Key was used with another body; use a new key for a new request.",
  },
  rate_limited: { status: 429, message: "Too many requests; retry later.", headers: ["Retry-After"] },
  segment_not_ready: {
    status: 503,
    message: "This segment is still being encoded; retry in a moment.",
    headers: ["Retry-After"],
  },
  frame_not_ready: {
    status: 503,
    message: "This frame is still being made; retry in a moment.",
    headers: ["Retry-After"],
  },
  transcription_unavailable: {
    status: 503,
    message: "No speech engine is available to generate captions.",
  },
  internal_error: { status: 500, message: "Something went wrong on our side." },
} as const satisfies Record<
  string,
  // `headers`: the response headers (by their name in the OpenAPI document) sent with the code.
  { status: ContentfulStatusCode; message: string; headers?: readonly string[] }
>;

export type ErrorCode = keyof typeof ERRORS;

/** The response headers that come with `code`. */
export function errorHeaders(code: ErrorCode): readonly string[] {
  const entry = ERRORS[code];
  return "headers" in entry ? entry.headers : [];
}

export type ErrorDetail = { path: string; message: string };

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERRORS[code].message);
    this.name = "ApiError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): ContentfulStatusCode {
    return ERRORS[this.code].status;
  }
}

export function errorResponse(c: Context<AppEnv>, error: ApiError): Response {
  const body = {
    error: {
      code: error.code,
      message: error.message,
      requestId: c.get("requestId"),
      ...(error.details ? { details: error.details } : {}),
    },
  };
  return c.json(body, error.status, error.headers);
}

/** Codes for the statuses Hono and its OpenAPI layer throw; other 4xx are a malformed request. */
const FRAMEWORK_CODES: Partial<Record<number, ErrorCode>> = {
  401: "unauthorized",
  404: "not_found",
  413: "payload_too_large",
};

/** Maps anything thrown to an error body; internal reasons go to the log, never to the client. */
export function handleError(error: unknown, c: Context<AppEnv>): Response {
  if (error instanceof ApiError) return errorResponse(c, error);
  if (error instanceof HTTPException && error.status < 500) {
    // The framework's own refusals are the client's, never a 500: each gets its code from the table.
    return errorResponse(c, new ApiError(FRAMEWORK_CODES[error.status] ?? "invalid_body"));
  }
  logError("request", error, { requestId: c.get("requestId"), method: c.req.method, path: c.req.path });
  return errorResponse(c, new ApiError("internal_error"));
}

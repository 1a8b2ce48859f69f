import type { OpenAPIHono } from "@hono/zod-openapi";
import { ROUTES } from "./route";
import { RESPONSE_HEADERS, type ResponseHeaderName } from "./schemas";

/** The parts of a JSON Schema (OpenAPI 3.1) that the document's completion, and the fuzzer, read. */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  description?: string;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  contentMediaType?: string;
};

/** Where routes, components and webhooks are registered for the document. */
export type OpenAPIRegistry = OpenAPIHono["openAPIRegistry"];

/** The document's own description: everything in it that no route states. */
export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: {
    title: "Video hosting API",
    version: "1.0.0",
    // SPDX has no id for "not open source"; LicenseRef- is its form for a license of one's own.
    // Whoever runs the deployment serving this document; it has no address of its own to give.
    contact: { name: "The operator of this deployment" },
    license: { name: "Proprietary: the service's own API, not open source", identifier: "LicenseRef-Proprietary" },
    description:
      "Videos and their uploads, bulk actions, custom thumbnails, project encoding settings, and signed " +
      "webhooks. Every path starts with /v1; bodies are JSON unless an operation takes raw bytes. Errors are " +
      '`{"error": {"code", "message", "requestId", "details"?}}`, with the codes each operation lists. ' +
      "Video operations take an API key (`Authorization: Bearer svc_live_…` or `svc_test_…`), or the " +
      "dashboard session cookie plus `?projectId=`; project settings and keys take the session only. " +
      "Every response carries `x-request-id`; answers that read or wrote data carry `x-d1-bookmark`, which " +
      "a client may send back to read its own writes. Lists are keyset-paginated: pass `nextCursor` as " +
      "`cursor`. Rate-limited operations answer with `RateLimit` and `RateLimit-Policy` headers, and 429 " +
      "`rate_limited` with `Retry-After` past the limit.\n\n" +
      "## Test mode\n\n" +
      "Every video (with its uploads, thumbnails, playback tokens and events) and every webhook endpoint (with " +
      "its delivery attempts) is live or test, shown as `livemode` in its JSON: the mode of the API key that " +
      "created it. A `svc_test_…` key sees only test objects and a `svc_live_…` key only live ones: any other " +
      "is unknown to it (404 with the resource's own code: `video_not_found`, `upload_not_found`, " +
      "`endpoint_not_found`; `video_not_found` for a bulk item), and its lists hold only its mode. The session " +
      "cookie sees both modes and creates live objects; with `?mode=test` (or `?mode=live`) it acts in that " +
      "mode only, as a key of that mode would: it creates test objects and its lists and reads narrow to them " +
      "(any other `mode` is `400 invalid_query`). Events stay in their mode: a test video's go to test " +
      "endpoints only, a live video's to live endpoints only. Test videos cost nothing to try: each is encoded " +
      "from its first 10 seconds only, and deleted 24 hours after its creation as `DELETE /v1/videos/{id}` " +
      "deletes it (its `video.deleted` included). Everything else (limits, errors, playback, tokens) is the " +
      "same in both modes, and each mode has its own 20 webhook endpoints.\n\n" +
      '**Moving from test to live.** Create a key with `"mode": "live"` ' +
      "(`POST /v1/projects/{projectId}/api-keys`, with the session cookie) and put it where your server had " +
      "the test key; create your webhook endpoints again with it (a test endpoint never receives a live " +
      "event, and the new endpoints have their own secrets), and upload your real videos with it. Requests, " +
      "answers and events are the same in both modes, so nothing else changes. Test objects stay in test " +
      "mode (nothing moves them to live); their videos are deleted after 24 hours anyway.",
  },
  servers: [{ url: "/", description: "This deployment (the document is served by the API it describes)" }],
  tags: [
    { name: "Accounts", description: "Sign up, log in and out; the dashboard session cookie `svc_session`" },
    { name: "Operator", description: "Approving and suspending accounts, with the operator token" },
    { name: "Projects", description: "Projects of an approved account" },
    { name: "API keys", description: "Keys scoped to one project, with read and/or write scope" },
    { name: "Encoding settings", description: "A project's output resolutions, codecs and watermark" },
    { name: "Videos", description: "Videos and bulk actions" },
    { name: "Uploads", description: "A video's source, uploaded in parts (an R2 multipart upload), then completed" },
    { name: "Thumbnails", description: "Custom thumbnail images, served publicly" },
    {
      name: "Captions",
      description:
        "Caption tracks, one per language (BCP 47), uploaded as WebVTT or SubRip and served as WebVTT; every player " +
        "of the video offers them (the master playlist's SUBTITLES group, the embed page)",
    },
    {
      name: "Chapters",
      description:
        "A video's chapters, each a start and a title: served as a WebVTT chapters track (`/play/{videoId}/chapters.vtt`) " +
        "and shown on the embed page's timeline",
    },
    {
      name: "Audio tracks",
      description:
        "A video's audio in other languages (a dub, an audio description), one per language (BCP 47): a file's " +
        "first audio stream, cut at the video's own segments, played beside the source's own audio (the master " +
        "playlist's `AUDIO=\"audio\"` group, the embed page's audio menu). The MP4 and the M4A keep the original.",
    },
    {
      name: "Playback",
      description:
        "A ready video plays from `GET /play/{videoId}/master.m3u8` (HLS: a variant per rendition, VOD, relative " +
        "URIs under the same prefix) and, when the project asked for it, `GET /play/{videoId}/video.mp4` (byte " +
        "ranges: 206, 416 past the end; its index first, so a player has its duration and seeks at once) and, when " +
        "its source has audio, `GET /play/{videoId}/audio.m4a` (the audio only: `audio/mp4`, AAC, byte ranges as the " +
        "MP4). Every " +
        "`/play/` answer carries `Access-Control-Allow-Origin: *`. `GET /play/{videoId}/thumbnail?time=&width=` is " +
        "the frame at a time; frames not yet made are bounded, 60 a minute per video and per client address (429 " +
        "`rate_limited` with `Retry-After`; a frame made already is always served). " +
        "Each caption track is `GET /play/{videoId}/captions/{language}.vtt`, and in the master playlist's " +
        '`SUBTITLES="subs"` group (a VOD subtitle playlist per track, `captions/{language}.m3u8`). ' +
        "A video with chapters has `GET /play/{videoId}/chapters.vtt`, a WebVTT chapters track (404 `not_found` " +
        "without chapters); a token bound to a range reads only the chapters that meet it. " +
        "`GET /embed/{videoId}` is an HTML page that plays it with a player this API serves itself (captions, " +
        "quality and speed menus, storyboard previews, keyboard shortcuts, picture-in-picture, fullscreen). A private " +
        "video's id URLs answer 403 `playback_token_required`: mint a token, which stands in the path in place of " +
        "the id until it expires (403 `invalid_playback_token` once altered or expired). Unknown, deleted or not " +
        "ready: 404 `not_found`. A video (or a token) with `allowedOrigins` answers 403 `origin_not_allowed` to a " +
        "request whose `Origin` (else `Referer`'s origin) it does not allow (neither header: allowed), and its embed " +
        "page sends `Content-Security-Policy: frame-ancestors` with those origins and the service's own (its " +
        "dashboard shows every video's player). `master.m3u8?start=&end=` " +
        "(seconds) is the video cut to the segments covering that span; a token may bind such a range, which the " +
        "query cannot widen (400 `invalid_query` for a bad or out-of-range value). " +
        "These public URLs need no credential and are not operations of this document.",
    },
    {
      name: "Analytics",
      description:
        "Viewing figures (views, watch time, startup time p50/p95, rebuffering, error views, renditions) from the " +
        "beacons players send to `POST /play/{videoId or token}/beacons` (`start`, `heartbeat` every 10 s, `end`; " +
        "the embed page sends them itself). A view's figures show within 60 s of its beacon. Test-mode videos " +
        "count apart: a key sees its own mode's figures.",
    },
    {
      name: "Webhooks",
      description:
        "Endpoints, signed video.deleted, video.ready and video.errored deliveries, and their attempts. Events are POSTed to your endpoints, " +
        "signed as Standard Webhooks; verify each delivery before you trust it:\n\n" +
        "```js\n" +
        'import { Webhook } from "standardwebhooks";\n\n' +
        '// The endpoint\'s secret, as shown once when it was created: "whsec_…"\n' +
        'const webhook = new Webhook(secret.slice("whsec_".length));\n' +
        "// rawBody: the request body exactly as received (a string), not re-serialized JSON.\n" +
        "const event = webhook.verify(rawBody, {\n" +
        '  "webhook-id": request.headers.get("webhook-id"),\n' +
        '  "webhook-timestamp": request.headers.get("webhook-timestamp"),\n' +
        '  "webhook-signature": request.headers.get("webhook-signature"),\n' +
        "}); // throws when no signature matches, or the timestamp is more than 5 minutes off\n" +
        "// Deduplicate on webhook-id: every attempt of one event carries the same id.\n" +
        "```",
    },
  ],
};

/**
 * The document's shared components: the credentials an operation may take, and the response
 * headers the routes refer to.
 */
export function registerComponents(registry: OpenAPIRegistry) {
  const used = new Set(
    ROUTES.flatMap((config) =>
      Object.values(config.responses).flatMap((response) =>
        Object.keys((response as { headers?: object }).headers ?? {}),
      ),
    ),
  );
  for (const name of Object.keys(RESPONSE_HEADERS) as ResponseHeaderName[]) {
    if (used.has(name)) registry.registerComponent("headers", name, RESPONSE_HEADERS[name]);
  }
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key, `svc_live_…` or `svc_test_…`, scoped to one project with read and/or write scope",
  });
  registry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "svc_session",
    description: "The dashboard session, set by POST /v1/auth/login; 7 days",
  });
  registry.registerComponent("securitySchemes", "operatorToken", {
    type: "http",
    scheme: "bearer",
    description:
      "The operator token (ADMIN_TOKEN). 10 missing or wrong tokens from one client address within 60 s: " +
      "429 `rate_limited` for that address (a right one too) until the oldest leaves the window.",
  });
}

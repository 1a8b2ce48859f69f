/**
 * The round trips each route makes on its success path, by kind: D1 queries and batches, Durable
 * Object calls (the rate limiter, tus uploads, encoding coordinators), R2 operations and queue sends. Each is a trip that a caller far
 * from the primary (D1) or the object (DO) pays for. `test/http/round-trips.test.ts` runs every
 * route through counting bindings and fails when one differs from this table; `npm run bench`
 * prints it beside the latencies. Work after the response (an API key's lastUsedAt, at most once a
 * minute per key) and in queue consumers is not counted. Replacing an existing image (thumbnail,
 * watermark) adds one R2 delete of the old one. A tus request is one call to its upload's object,
 * which then makes its own: one D1 read (is the video still there?) for every request,
 * and for a PATCH one R2 part upload per whole part (8 MiB), and at the last byte the completion's
 * (two D1 writes, one R2 complete).
 */
export const ROUND_TRIP_BUDGET = {
  "POST /v1/auth/signup": { d1: 1, do: 1, r2: 0, queue: 0 },
  "POST /v1/auth/login": { d1: 2, do: 3, r2: 0, queue: 0 },
  "POST /v1/auth/logout": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/account": { d1: 1, do: 0, r2: 0, queue: 0 },
  "POST /v1/account/password": { d1: 3, do: 2, r2: 0, queue: 0 },
  "GET /v1/admin/accounts": { d1: 1, do: 1, r2: 0, queue: 0 },
  "POST /v1/admin/accounts/{accountId}/approve": { d1: 1, do: 1, r2: 0, queue: 0 },
  "POST /v1/admin/accounts/{accountId}/suspend": { d1: 1, do: 1, r2: 0, queue: 0 },
  "PUT /v1/admin/accounts/{accountId}/plan": { d1: 1, do: 1, r2: 0, queue: 0 },
  "POST /v1/projects": { d1: 2, do: 1, r2: 0, queue: 0 },
  "GET /v1/projects": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/projects/{projectId}": { d1: 2, do: 0, r2: 0, queue: 1 },
  "POST /v1/projects/{projectId}/api-keys": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}/api-keys": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/projects/{projectId}/api-keys/{keyId}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}/encoding-settings": { d1: 2, do: 0, r2: 0, queue: 0 },
  "PATCH /v1/projects/{projectId}/encoding-settings": { d1: 2, do: 1, r2: 0, queue: 0 },
  "PUT /v1/projects/{projectId}/encoding-settings/watermark-image": { d1: 2, do: 0, r2: 1, queue: 0 },
  "DELETE /v1/projects/{projectId}/encoding-settings/watermark-image": { d1: 2, do: 0, r2: 1, queue: 0 },
  "POST /v1/videos/bulk set_visibility": { d1: 2, do: 1, r2: 0, queue: 0 },
  "POST /v1/videos/bulk delete": { d1: 2, do: 1, r2: 0, queue: 1 },
  "POST /v1/videos": { d1: 2, do: 0, r2: 1, queue: 0 },
  "POST /v1/uploads": { d1: 2, do: 1, r2: 1, queue: 0 },
  "GET /v1/uploads/{id}": { d1: 2, do: 1, r2: 0, queue: 0 },
  "OPTIONS /tus/{token}": { d1: 0, do: 1, r2: 0, queue: 0 },
  "POST /tus/{token}": { d1: 0, do: 1, r2: 0, queue: 0 },
  "HEAD /tus/{token}/source": { d1: 0, do: 1, r2: 0, queue: 0 },
  "PATCH /tus/{token}/source": { d1: 0, do: 1, r2: 0, queue: 0 },
  "DELETE /tus/{token}/source": { d1: 0, do: 1, r2: 0, queue: 0 },
  "GET /v1/videos": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/videos/{id}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "PATCH /v1/videos/{id}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/videos/{id}": { d1: 2, do: 0, r2: 0, queue: 1 },
  "PUT /v1/videos/{id}/upload/parts/{partNumber}": { d1: 3, do: 0, r2: 1, queue: 0 },
  // The send that queues the video for encoding.
  "POST /v1/videos/{id}/upload/complete": { d1: 5, do: 0, r2: 1, queue: 1 },
  "POST /v1/videos/{id}/playback-tokens": { d1: 2, do: 0, r2: 0, queue: 0 },
  "PUT /v1/videos/{id}/thumbnail": { d1: 2, do: 1, r2: 1, queue: 0 },
  "DELETE /v1/videos/{id}/thumbnail": { d1: 2, do: 0, r2: 1, queue: 0 },
  // Caption tracks: the video's check rides in the batch of each write or read (a replaced track
  // adds one R2 delete of its old file, like a thumbnail).
  "PUT /v1/videos/{id}/captions/{language}": { d1: 2, do: 1, r2: 1, queue: 0 },
  "GET /v1/videos/{id}/captions": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/videos/{id}/captions/{language}": { d1: 2, do: 0, r2: 1, queue: 0 },
  "POST /v1/videos/{id}/captions/{language}/generate": { d1: 3, do: 1, r2: 0, queue: 1 },
  // Chapters: the video's check rides in the statement that writes them (or in the batch that reads them).
  "PUT /v1/videos/{id}/chapters": { d1: 2, do: 1, r2: 0, queue: 0 },
  "GET /v1/videos/{id}/chapters": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/videos/{id}/chapters": { d1: 2, do: 0, r2: 0, queue: 0 },
  // Audio tracks: the video and its tracks in one batch (the refusals are decided before the file is
  // read), the file streamed to R2, the track's row, and the coordinator told. A delete removes the
  // track's generation by its prefix (one list, one delete) and tells a coordinator still making it.
  "PUT /v1/videos/{id}/audio-tracks/{language}": { d1: 3, do: 1, r2: 1, queue: 1 },
  "GET /v1/videos/{id}/audio-tracks": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/videos/{id}/audio-tracks/{language}": { d1: 2, do: 0, r2: 2, queue: 1 },
  "POST /v1/projects/{projectId}/webhook-endpoints": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}/webhook-endpoints": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}/webhook-endpoints/{id}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "PATCH /v1/projects/{projectId}/webhook-endpoints/{id}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "DELETE /v1/projects/{projectId}/webhook-endpoints/{id}": { d1: 2, do: 0, r2: 0, queue: 0 },
  "POST /v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret": { d1: 2, do: 0, r2: 0, queue: 0 },
  "GET /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries": { d1: 2, do: 1, r2: 0, queue: 0 },
  "POST /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry": {
    d1: 4,
    do: 1,
    r2: 0,
    queue: 1,
  },
  // The D1 read (is the project deleted?) runs beside the R2 read, not before it.
  "GET /thumbnails/{projectId}/{videoId}/{file}": { d1: 1, do: 0, r2: 1, queue: 0 },
  // Playback, the hot path, as its first request in an isolate makes it: one D1 batch (the video:
  // live, visibility, playable, its plan; and its caption tracks), then remembered for 5 s with no
  // D1 read at all (test/playback/remembered-state.test.ts, edge-cache.test.ts); the playlists are
  // made from the plan with no other trip, a file is one R2 read; a token is verified in the
  // isolate, with no trip. A segment not made yet (the video still processing) adds its R2 miss,
  // one call to the video's coordinator (which waits for it) and the R2 read that serves it.
  "GET /play/{id}/master.m3u8": { d1: 1, do: 0, r2: 0, queue: 0 },
  "GET /play/{id}/{rendition}/index.m3u8": { d1: 1, do: 0, r2: 0, queue: 0 },
  "GET /play/{id}/{rendition}/{segment}": { d1: 1, do: 0, r2: 1, queue: 0 },
  "GET /play/{id}/{rendition}/{segment} on demand": { d1: 1, do: 1, r2: 2, queue: 0 },
  "GET /play/{id}/video.mp4 range": { d1: 1, do: 0, r2: 1, queue: 0 },
  "GET /play/{token}/master.m3u8": { d1: 1, do: 0, r2: 0, queue: 0 },
  "GET /embed/{id}": { d1: 1, do: 0, r2: 0, queue: 0 },
  // With caption tracks, which come in the same D1 batch as the video (the remembered state): no trip more.
  "GET /play/{id}/master.m3u8 with captions": { d1: 1, do: 0, r2: 0, queue: 0 },
  "GET /play/{id}/captions/{language}.vtt": { d1: 1, do: 0, r2: 1, queue: 0 },
  "GET /play/{id}/captions/{language}.m3u8": { d1: 1, do: 0, r2: 0, queue: 0 },
  "GET /embed/{id} with captions": { d1: 1, do: 0, r2: 0, queue: 0 },
  // The chapters come in the same batch too, and their track is made from them: no R2 read.
  "GET /play/{id}/chapters.vtt": { d1: 1, do: 0, r2: 0, queue: 0 },
  // Analytics (docs/analytics.md): a beacon reads its video's state (as /play/ does), counts itself in its
  // client's rate-limit object and is queued; no D1 write (the queue's consumer folds by the batch).
  // An answer reads the rollups (and the project's top videos) in one batch, beside the video's check.
  "POST /play/{id}/beacons": { d1: 1, do: 1, r2: 0, queue: 1 },
  "GET /v1/videos/{id}/analytics": { d1: 3, do: 0, r2: 0, queue: 0 },
  "GET /v1/analytics": { d1: 2, do: 0, r2: 0, queue: 0 },
  // The encoder's calls back (internal): each asks the video's coordinator whether its job still
  // runs, in one call (a finished job's token reads no source:
  // docs/encoding-hardening.md#a-finished-jobs-token); a source read is then one R2 read (its token
  // names the video).
  "GET /internal/encoding/{project}/{id}/{job}/source range": { d1: 0, do: 1, r2: 1, queue: 0 },
  "PUT /internal/encoding/{project}/{id}/{job}/segments/{rendition}/{segment}": { d1: 0, do: 2, r2: 1, queue: 0 },
  "POST /internal/encoding/{project}/{id}/{job}/heartbeat": { d1: 0, do: 1, r2: 0, queue: 0 },
} as const satisfies Record<string, { d1: number; do: number; r2: number; queue: number }>;

export type BudgetedRoute = keyof typeof ROUND_TRIP_BUDGET;

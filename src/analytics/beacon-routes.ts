import { Hono } from "hono";
import { readJsonText } from "../http/body";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { issueDetails } from "../http/validation";
import { playCors } from "../playback/cors";
import { withPlayableSubject } from "../playback/state";
import { subjectOf } from "../playback/subject";
import { limitBeacon } from "../rate-limit/middleware";
import { renditionLabelsOf } from "../videos/model";
import { PLAY_PATH } from "../videos/urls";
import { BEACON_MAX_BYTES, BeaconSchema, withKnownRendition } from "./beacon";
import { sendBeacon } from "./queue";

const BEACONS = `${PLAY_PATH}/:subject/beacons`;
const CORS = playCors({
  methods: ["POST", "OPTIONS"],
  headers: ["Content-Type"],
  expose: ["RateLimit", "RateLimit-Policy", "Retry-After", "x-request-id"],
});
const BEACON_BODY = { accepts: (type: string) => type === "application/json", maxBytes: BEACON_MAX_BYTES };

/**
 * `POST /play/<videoId or token>/beacons` (docs/analytics.md): a player's report of a view, from
 * any origin, with no credential but the URL (a private video's needs its token, as `/play/`).
 * The body is checked first (a JSON beacon of at most 4 KiB, strictly; else `400 invalid_body`),
 * then the video (the `/play/` answer of one that cannot be played) and the rate limits (60 a
 * minute per view, 600 per client address), side by side; then the beacon is queued with its
 * video's project and mode and the time it arrived (a rendition the video does not have left out),
 * and answered `204`. A beacon of a view past the 20 of a video its address may start a minute
 * (counted by the limiter's same call) is answered `204` and not queued: it adds nothing. No D1
 * write: the queue's consumer folds beacons by the batch (src/analytics/queue.ts).
 */
export const beaconRoutes = new Hono<AppEnv>()
  .use(BEACONS, CORS.headers)
  .options(BEACONS, CORS.preflight)
  .post(BEACONS, async (c) => {
    const at = Date.now();
    let text: string;
    try {
      text = await readJsonText(c, BEACON_BODY);
    } catch (error) {
      if (error instanceof ApiError && error.code === "payload_too_large") {
        throw new ApiError("invalid_body", { message: `A beacon is at most ${BEACON_MAX_BYTES} bytes.` });
      }
      throw error;
    }
    const parsed = BeaconSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new ApiError("invalid_body", { details: issueDetails(parsed.error.issues) });
    const beacon = parsed.data;
    // The subject's video id first (a token is read here, without I/O), for the limiter's count.
    const subject = await subjectOf(c, c.req.param("subject"));
    const view = { videoId: subject.grant.videoId, viewId: beacon.viewId };
    // The video's answer comes before the rate limit's, whichever arrives first.
    const [found, limited] = await Promise.allSettled([
      // The video's state as remembered for at most 5 s (docs/playback-at-scale.md): no D1 read of its own.
      withPlayableSubject(c, subject, async ({ row }) => row),
      limitBeacon(c, view),
    ]);
    if (found.status === "rejected") throw found.reason;
    if (limited.status === "rejected") throw limited.reason;
    // A view past the ones its address may start a minute adds nothing: answered, not queued.
    if (!limited.value.counts) return c.body(null, 204);
    const video = found.value;
    await sendBeacon(c.env.BEACON_QUEUE, {
      beacon: withKnownRendition(beacon, renditionLabelsOf(video)),
      videoId: video.id,
      projectId: video.project_id,
      livemode: video.livemode === 1,
      at,
    });
    return c.body(null, 204);
  })
  // Any other method: the playback router's GET would take the path for a file.
  .all(BEACONS, () => {
    throw new ApiError("method_not_allowed", { headers: { Allow: "OPTIONS, POST" } });
  });

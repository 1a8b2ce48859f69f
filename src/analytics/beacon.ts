import { z } from "zod";
import { textSchema } from "../http/schemas";
import { CanonicalUlidSchema } from "../lib/ulid";

/** A beacon's body is at most this many bytes (docs/analytics.md); more is `400 invalid_body`. */
export const BEACON_MAX_BYTES = 4 * 1024;

/** Longer than any view: a week of watching, in ms. */
const MAX_TOTAL_MS = 7 * 24 * 3600 * 1000;
const total = (what: string) => z.int().min(0).max(MAX_TOTAL_MS).describe(what);

/** A rendition's label (docs/encoding.md#renditions-and-the-watermark): its shorter side, as "720p". */
const RENDITION = /^[1-9][0-9]{0,4}p$/;

/**
 * What a player sends (docs/analytics.md), strictly: `watchedMs`, `rebufferCount` and
 * `rebufferMs` are the view's totals so far, so the same beacon sent twice, or two arriving out of
 * order, count once.
 */
export const BeaconSchema = z.strictObject({
  viewId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, "16 to 64 characters of A-Z, a-z, 0-9, _ and -"),
  event: z.enum(["start", "heartbeat", "end"]),
  playheadSeconds: z
    .number()
    .min(0)
    .max(MAX_TOTAL_MS / 1000),
  watchedMs: total("time spent playing so far"),
  startupMs: z
    .int()
    .min(0)
    .max(10 * 60 * 1000)
    .optional(),
  rebufferCount: z.int().min(0).max(1_000_000),
  rebufferMs: total("time spent rebuffering so far"),
  rendition: z.string().regex(RENDITION, 'a rendition label such as "720p"').optional(),
  error: textSchema().min(1).max(200).optional(),
});
export type Beacon = z.infer<typeof BeaconSchema>;

/**
 * The beacon as it counts for a video of these renditions: a rendition the video does not have
 * counts in no share, so it is dropped; the watch time stays the view's (docs/analytics.md).
 */
export function withKnownRendition(beacon: Beacon, renditions: readonly string[]): Beacon {
  if (beacon.rendition === undefined || renditions.includes(beacon.rendition)) return beacon;
  const { rendition: _unknown, ...rest } = beacon;
  return rest;
}

/**
 * A beacon as the route queues it: the beacon, with what the route learnt of its video (project
 * and mode, so the consumer needs no read of the video) and when it arrived (ms), which bounds
 * the view's watch time.
 */
export const BeaconMessageSchema = z.strictObject({
  beacon: BeaconSchema,
  videoId: CanonicalUlidSchema,
  projectId: CanonicalUlidSchema,
  livemode: z.boolean(),
  at: z.int().positive(),
});
export type BeaconMessage = z.infer<typeof BeaconMessageSchema>;

import { ApiError } from "../http/errors";

/**
 * Every rate limit of the API, as data. `per: "caller"` counts per API key or session, and beside
 * it per tenant (the request's project, else the caller's account) at `TENANT_MULTIPLIER` times
 * the limit, so that minting keys or logging in again does not multiply a tenant's ceiling.
 * `per: "ip"` counts per client address (`CF-Connecting-IP`, IPv6 per /64), `per: "ip+email"` per
 * client address and login email. The `_failures` policies count failed attempts only.
 */
export const POLICIES = {
  signup: { limit: 10, windowSeconds: 60, per: "ip" },
  login: { limit: 10, windowSeconds: 60, per: "ip" },
  /**
   * Failed logins per client and email: counted before the password check, given back on success.
   * Per client, so that nobody else's failures can lock the owner of an email out.
   */
  login_failures: { limit: 10, windowSeconds: 60, per: "ip+email" },
  /** Missing or wrong operator tokens per client; a right token is never counted. */
  operator_failures: { limit: 10, windowSeconds: 60, per: "ip" },
  /**
   * Frames not yet made asked for at `/play/<x>/thumbnail?time=`
   * (docs/encoding.md#frames-and-the-storyboard), per client address; the video's own limit is kept
   * by its coordinator (encoding/pipeline/frame-budget.ts).
   */
  frames: { limit: 60, windowSeconds: 60, per: "ip" },
  bulk: { limit: 30, windowSeconds: 60, per: "caller" },
  thumbnail: { limit: 30, windowSeconds: 60, per: "caller" },
  /** Caption uploads (PUT): a track per language, so a little more room than thumbnails. */
  captions: { limit: 60, windowSeconds: 60, per: "caller" },
  /** Chapter lists (PUT), as many as caption tracks. */
  chapters: { limit: 60, windowSeconds: 60, per: "caller" },
  /** Audio track writes (PUT, up to 100 MB each, and DELETE), as many as thumbnails. */
  audio_tracks: { limit: 30, windowSeconds: 60, per: "caller" },
  deliveries: { limit: 60, windowSeconds: 60, per: "caller" },
  encoding_settings: { limit: 60, windowSeconds: 60, per: "caller" },
  project_create: { limit: 60, windowSeconds: 60, per: "caller" },
  delivery_retry: { limit: 30, windowSeconds: 60, per: "caller" },
  /**
   * Viewing beacons (docs/analytics.md) per client address; beside it, in the same call, each
   * view's own bucket of `BEACONS_PER_VIEW` (`limitBeacon`).
   */
  beacons: { limit: 600, windowSeconds: 60, per: "ip" },
} as const satisfies Record<string, { limit: number; windowSeconds: number; per: "caller" | "ip" | "ip+email" }>;

/** A view's beacons a minute, counted in its client's object beside the client's `beacons` bucket. */
export const BEACONS_PER_VIEW = 60;

/**
 * The views of one video one client address may start in a window (20 a minute; a beacon of
 * one more counts nothing: docs/analytics.md), and how long a started view is remembered without
 * a beacon: a paused player sends none, and one remembered no longer starts again (view-starts.ts).
 */
export const VIEW_STARTS = { limit: 20, windowSeconds: 60, memorySeconds: 600 } as const;

/** A tenant's bucket holds this many times its callers' limit. */
export const TENANT_MULTIPLIER = 10;

export type PolicyName = keyof typeof POLICIES;

/** Policies that count failed attempts only, through their own functions rather than `rateLimit`. */
export type FailurePolicyName = "login_failures" | "operator_failures";

/** Policies that count every request, through the `rateLimit` middleware. */
export type RequestPolicyName = Exclude<PolicyName, FailurePolicyName>;

/** How many of a thing one project may hold at once; one more is `409 quota_exceeded`. */
export const QUOTAS = {
  webhook_endpoints: { limit: 20, what: "webhook endpoints" },
  api_keys: { limit: 100, what: "unrevoked API keys" },
} as const satisfies Record<string, { limit: number; what: string }>;

export type QuotaName = keyof typeof QUOTAS;

export function quotaExceeded(name: QuotaName): ApiError {
  const quota = QUOTAS[name];
  return new ApiError("quota_exceeded", { message: `A project may hold at most ${quota.limit} ${quota.what}.` });
}

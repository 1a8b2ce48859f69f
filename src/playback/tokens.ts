import { signText, timingSafeEqual } from "../lib/crypto";
import { fromBase64Url, toBase64Url } from "../lib/encoding";
import { acceptedSecrets, type RotatingSecret } from "../lib/secrets";
import { parseUlid } from "../lib/ulid";

const LABEL = "playback-token";
const TOKEN = /^([0-9A-Z]{26})\.([0-9]{1,12})(?:\.([A-Za-z0-9_-]{1,2048}))?\.([A-Za-z0-9_-]{43})$/;

/**
 * What a token may bind beside its video and expiry (docs/import-clips-search.md): its own allowed
 * origins (both the video's and these apply), and a range of the video in seconds (a clip the query
 * cannot widen).
 */
export type TokenClaims = { allowedOrigins?: string[]; start?: number; end?: number };

/** A verified token: the video it plays and what it binds. */
export type PlaybackGrant = { videoId: string } & TokenClaims;

/**
 * A playback token (docs/encoding.md#playback-tokens-and-the-embed-page,
 * docs/import-clips-search.md): `<videoId>.<expiry, unix seconds>.<HMAC-SHA256>`, or with claims
 * `<videoId>.<expiry>.<claims: base64url JSON>.<HMAC-SHA256>`, signed with a key derived from
 * PLAYBACK_SECRET over everything before the signature. It stands in the path in place of the video
 * id, so it is URL-safe and never a ULID. It names no visibility: it plays the video whatever that
 * becomes, until it expires.
 */
export async function mintPlaybackToken(
  secret: string,
  videoId: string,
  expiresAt: number,
  claims: TokenClaims = {},
): Promise<string> {
  const packed = packClaims(claims);
  const claim = packed === null ? `${videoId}.${expiresAt}` : `${videoId}.${expiresAt}.${packed}`;
  return `${claim}.${await signText(secret, LABEL, claim)}`;
}

function packClaims(claims: TokenClaims): string | null {
  const short: { o?: string[]; s?: number; e?: number } = {};
  if (claims.allowedOrigins && claims.allowedOrigins.length > 0) short.o = claims.allowedOrigins;
  if (claims.start !== undefined) short.s = claims.start;
  if (claims.end !== undefined) short.e = claims.end;
  return Object.keys(short).length === 0 ? null : toBase64Url(new TextEncoder().encode(JSON.stringify(short)));
}

function unpackClaims(packed: string): TokenClaims | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(fromBase64Url(packed)));
    if (typeof value !== "object" || value === null) return null;
    const { o, s, e } = value as { o?: unknown; s?: unknown; e?: unknown };
    const claims: TokenClaims = {};
    if (o !== undefined) {
      if (!Array.isArray(o) || !o.every((origin) => typeof origin === "string")) return null;
      claims.allowedOrigins = o as string[];
    }
    if (s !== undefined) {
      if (typeof s !== "number") return null;
      claims.start = s;
    }
    if (e !== undefined) {
      if (typeof e !== "number") return null;
      claims.end = e;
    }
    return claims;
  } catch {
    return null;
  }
}

/**
 * The video a token plays and what it binds, or null when it was not made here (with
 * PLAYBACK_SECRET's current value, or its previous one during a rotation), was altered, or has
 * expired.
 */
export async function readPlaybackToken(
  secret: RotatingSecret,
  token: string,
  now: number,
): Promise<PlaybackGrant | null> {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, videoId = "", expiry = "", packed, signature = ""] = match;
  if (parseUlid(videoId) !== videoId) return null;
  const claim = packed === undefined ? `${videoId}.${expiry}` : `${videoId}.${expiry}.${packed}`;
  let signed = false;
  for (const value of acceptedSecrets(secret)) {
    if (timingSafeEqual(await signText(value, LABEL, claim), signature)) signed = true;
  }
  if (!signed || Number(expiry) * 1000 <= now) return null;
  const claims = packed === undefined ? {} : unpackClaims(packed);
  return claims === null ? null : { videoId, ...claims };
}

/** The video a token plays, or null (as `readPlaybackToken`). */
export async function verifyPlaybackToken(secret: RotatingSecret, token: string, now: number): Promise<string | null> {
  return (await readPlaybackToken(secret, token, now))?.videoId ?? null;
}

import { signText, timingSafeEqual } from "../lib/crypto";
import { acceptedSecrets, type RotatingSecret } from "../lib/secrets";
import { parseUlid } from "../lib/ulid";

const LABEL = "playback-token";
const TOKEN = /^([0-9A-Z]{26})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * A playback token (contract section 12): `<videoId>.<expiry, unix seconds>.<HMAC-SHA256>`, signed
 * with a key derived from PLAYBACK_SECRET. It stands in the path in place of the video id, so it
 * is URL-safe and never a ULID. It names no visibility: it plays the video whatever that becomes,
 * until it expires.
 */
export async function mintPlaybackToken(secret: string, videoId: string, expiresAt: number): Promise<string> {
  const claim = `${videoId}.${expiresAt}`;
  return `${claim}.${await signText(secret, LABEL, claim)}`;
}

/**
 * The video a token plays, or null when it was not made here (with PLAYBACK_SECRET's current value,
 * or its previous one during a rotation), was altered, or has expired.
 */
export async function verifyPlaybackToken(secret: RotatingSecret, token: string, now: number): Promise<string | null> {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, videoId = "", expiry = "", signature = ""] = match;
  if (parseUlid(videoId) !== videoId) return null;
  let signed = false;
  for (const value of acceptedSecrets(secret)) {
    if (timingSafeEqual(await signText(value, LABEL, `${videoId}.${expiry}`), signature)) signed = true;
  }
  if (!signed) return null;
  return Number(expiry) * 1000 > now ? videoId : null;
}

import { signBytes, timingSafeEqual } from "../../lib/crypto";
import { toBase64Url } from "../../lib/encoding";
import { acceptedSecrets, type RotatingSecret } from "../../lib/secrets";
import { parseUlid } from "../../lib/ulid";

/**
 * An upload URL is its own credential (docs/api-guide.md#direct-uploads-from-a-browser-tus):
 * `/tus/{token}`, whose token is the upload's id and an HMAC of it under a key derived from
 * UPLOAD_URL_SECRET. Anyone holding it may upload; an altered one names nothing, and is refused
 * before any storage is touched. The upload it creates lives at `/tus/{token}/source`.
 */

/** 128 bits of HMAC-SHA256, as for cursors: plenty against forgery. */
const MAC_BYTES = 16;

/** The URL's MAC, under a key of its own derived from the secret, so no other signature of it is ever a valid URL. */
async function mac(secret: string, uploadId: string): Promise<Uint8Array> {
  return (await signBytes(secret, "tus upload url v1", uploadId)).subarray(0, MAC_BYTES);
}

export async function uploadToken(secret: string, uploadId: string): Promise<string> {
  return `${uploadId}.${toBase64Url(await mac(secret, uploadId))}`;
}

/**
 * The upload id a token names, or null when the token is not one this API issued (with
 * UPLOAD_URL_SECRET's current value, or its previous one during a rotation).
 */
export async function verifyUploadToken(secret: RotatingSecret, token: string): Promise<string | null> {
  const match = /^([0-9A-Za-z]{26})\.([A-Za-z0-9_-]{22})$/.exec(token);
  const uploadId = parseUlid(match?.[1]);
  if (!match || !uploadId || match[1] !== uploadId) return null;
  // The text is compared, not the bytes it decodes to: 22 base64url characters carry 132 bits for
  // the MAC's 128, so 16 spellings decode to the same bytes, and only the one this API wrote is its URL.
  let signed = false;
  for (const value of acceptedSecrets(secret)) {
    if (timingSafeEqual(match[2] as string, toBase64Url(await mac(value, uploadId)))) signed = true;
  }
  return signed ? uploadId : null;
}

/** The creation URL a token is served at, under `origin`. */
export function creationUrl(origin: string, token: string): string {
  return `${origin}/tus/${token}`;
}

/** The upload a creation URL makes. */
export function uploadLocation(url: string): string {
  return `${url}/source`;
}

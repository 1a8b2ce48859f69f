import { fromBase64Url, toBase64Url } from "../lib/encoding";
import { parseUlid } from "../lib/ulid";

/**
 * An upload URL is its own credential (contract section 13): `/tus/{token}`, whose token is the
 * upload's id and an HMAC of it under a key derived from CURSOR_SECRET. Anyone holding it may
 * upload; an altered one names nothing, and is refused before any storage is touched. The upload
 * it creates lives at `/tus/{token}/source`.
 */

/** 128 bits of HMAC-SHA256, as for cursors: plenty against forgery. */
const MAC_BYTES = 16;
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function urlKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const root = await crypto.subtle.importKey(
        "raw",
        encoder.encode(secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      // A key of its own for upload URLs, so no other signature of this secret is ever a valid URL.
      const derived = await crypto.subtle.sign("HMAC", root, encoder.encode("tus upload url v1"));
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    })();
    keys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, uploadId: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await urlKey(secret), encoder.encode(uploadId)), 0, MAC_BYTES);
}

export async function uploadToken(secret: string, uploadId: string): Promise<string> {
  return `${uploadId}.${toBase64Url(await mac(secret, uploadId))}`;
}

/** The upload id a token names, or null when the token is not one this API issued. */
export async function verifyUploadToken(secret: string, token: string): Promise<string | null> {
  const match = /^([0-9A-Za-z]{26})\.([A-Za-z0-9_-]{22})$/.exec(token);
  const uploadId = parseUlid(match?.[1]);
  if (!match || !uploadId || match[1] !== uploadId) return null;
  const presented = fromBase64Url(match[2] as string);
  const expected = await mac(secret, uploadId);
  return presented.byteLength === MAC_BYTES && crypto.subtle.timingSafeEqual(presented, expected) ? uploadId : null;
}

/** The creation URL a token is served at, under `origin`. */
export function creationUrl(origin: string, token: string): string {
  return `${origin}/tus/${token}`;
}

/** The upload a creation URL makes. */
export function uploadLocation(url: string): string {
  return `${url}/source`;
}

import { timingSafeEqual } from "./crypto";
import { fromBase64Url, toBase64Url } from "./encoding";
import { acceptedSecrets, type RotatingSecret } from "./secrets";
import { parseUlid } from "./ulid";

/** A keyset position: the last row of a page, ordered by createdAt then id, both descending. */
export type Position = { createdAt: string; id: string };

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** 128 bits of HMAC-SHA256: plenty against forgery, and keeps cursors short. */
const MAC_BYTES = 16;
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function mac(secret: string, scope: string, payload: string): Promise<Uint8Array> {
  const signed = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`c1\n${scope}\n${payload}`));
  return new Uint8Array(signed, 0, MAC_BYTES);
}

/**
 * A cursor for `position`, signed with `secret` over the position and `scope`: the listing it
 * belongs to (which endpoint, which filter), so it is refused anywhere else.
 */
export async function encodeCursor(secret: string, scope: string, position: Position): Promise<string> {
  const payload = toBase64Url(encoder.encode(JSON.stringify([position.createdAt, position.id])));
  return `${payload}.${toBase64Url(await mac(secret, scope, payload))}`;
}

/**
 * The position a cursor names, or null when it is not one this API issued for `scope`: signed with
 * the secret's current value, or its previous one during a rotation.
 */
export async function decodeCursor(secret: RotatingSecret, scope: string, cursor: string): Promise<Position | null> {
  const match = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!match) return null;
  const [, payload = "", signature = ""] = match;
  // The signature's text is compared, not its bytes: its 22 characters carry 4 bits more than the
  // MAC, so 16 spellings decode alike, and only the one this API wrote is its cursor.
  let signed = false;
  for (const value of acceptedSecrets(secret)) {
    if (timingSafeEqual(signature, toBase64Url(await mac(value, scope, payload)))) signed = true;
  }
  if (!signed) return null;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, id] = value;
    const ulid = parseUlid(typeof id === "string" ? id : null);
    if (typeof createdAt !== "string" || !ISO_MS.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !ulid)
      return null;
    return { createdAt, id: ulid };
  } catch {
    return null;
  }
}

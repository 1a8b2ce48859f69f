import { fromBase64, toBase64, toBase64Url, toHex } from "./encoding";

const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** A random token with `bytes` bytes of entropy, base64url encoded. */
export function randomToken(bytes = 32): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Compares two strings in time that depends only on their lengths. */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) {
    // Still do the work so the length mismatch is not the only fast path.
    crypto.subtle.timingSafeEqual(left, left);
    return false;
  }
  return crypto.subtle.timingSafeEqual(left, right);
}

function hmacKey(raw: BufferSource): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** Key material for one purpose (`label`), derived from a Worker secret by HMAC-SHA256. */
async function purposeBytes(secret: string, label: string): Promise<ArrayBuffer> {
  return crypto.subtle.sign("HMAC", await hmacKey(encoder.encode(secret)), encoder.encode(label));
}

/** An AES-GCM key for one purpose (`label`), derived from a Worker secret. */
async function purposeKey(secret: string, label: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", await purposeBytes(secret, label), "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** Signing keys by secret and purpose: derived once per isolate, then reused by every request. */
const signingKeys = new Map<string, Promise<CryptoKey>>();

function signingKey(secret: string, label: string): Promise<CryptoKey> {
  const id = `${label}\n${secret}`;
  let key = signingKeys.get(id);
  if (!key) {
    key = purposeBytes(secret, label).then(hmacKey);
    signingKeys.set(id, key);
  }
  return key;
}

/**
 * The HMAC-SHA256 of `message` under a key derived from `secret` for `label`: a signature only this
 * Worker can make, and only for that purpose.
 */
export async function signBytes(secret: string, label: string, message: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(secret, label), encoder.encode(message)));
}

/** `signBytes` as base64url text. */
export async function signText(secret: string, label: string, message: string): Promise<string> {
  return toBase64Url(await signBytes(secret, label, message));
}

/** Encrypts text under a key derived from `secret` for `label`: `base64(iv).base64(ciphertext)`. */
export async function sealText(secret: string, label: string, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await purposeKey(secret, label),
    encoder.encode(text),
  );
  return `${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

/** Decrypts what `sealText` made with the same secret and label (throws if it was altered). */
export async function openText(secret: string, label: string, sealed: string): Promise<string> {
  const [iv = "", body = ""] = sealed.split(".");
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv) },
    await purposeKey(secret, label),
    fromBase64(body),
  );
  return new TextDecoder().decode(opened);
}

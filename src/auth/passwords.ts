import { timingSafeEqual } from "../lib/crypto";
import { fromBase64, toBase64 } from "../lib/encoding";

// The Workers runtime caps PBKDF2 at 100,000 iterations.
const ITERATIONS = 100_000;
const SCHEME = "pbkdf2-sha256";

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return toBase64(new Uint8Array(bits));
}

/** `pbkdf2-sha256$<iterations>$<salt>$<hash>`, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return `${SCHEME}$${ITERATIONS}$${toBase64(salt)}$${await derive(password, salt, ITERATIONS)}`;
}

// Verified against when no account has the email, so both failures take the same time.
const DECOY_HASH = `${SCHEME}$${ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, iterations, salt, hash] = (stored ?? DECOY_HASH).split("$");
  if (scheme !== SCHEME || !iterations || !salt || !hash) return false;
  const candidate = await derive(password, fromBase64(salt), Number(iterations));
  return timingSafeEqual(candidate, hash) && stored !== null;
}

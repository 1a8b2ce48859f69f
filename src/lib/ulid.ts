// ULIDs: 48 bits of milliseconds and 80 random bits, in Crockford base32, upper case.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function ulid(now: number = Date.now()): string {
  let time = "";
  let ms = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const random = crypto.getRandomValues(new Uint8Array(16));
  let rest = "";
  for (const byte of random) rest += ALPHABET[byte % 32];
  return time + rest;
}

/** The canonical (upper-case) form of an id, or null when the text is not a ULID. */
export function parseUlid(text: string | undefined | null): string | null {
  if (typeof text !== "string") return null;
  const upper = text.toUpperCase();
  return ULID_PATTERN.test(upper) ? upper : null;
}

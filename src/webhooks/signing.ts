import { fromBase64, toBase64 } from "../lib/encoding";

const PREFIX = "whsec_";

/** A new endpoint secret: `whsec_` and 24 random bytes in base64. */
export function newSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(24)));
}

async function sign(secret: string, content: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64(secret.slice(PREFIX.length)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return `v1,${toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, content)))}`;
}

/**
 * Standard Webhooks headers for a delivery: `webhook-signature` is `v1,` and the base64
 * HMAC-SHA256 of "id.timestamp.body", keyed by the secret's base64 part; one signature per secret,
 * space-separated, in the order given (after a rotation: the new secret's first).
 */
export async function signatureHeaders(secrets: string[], eventId: string, timestamp: number, body: string) {
  const content = new TextEncoder().encode(`${eventId}.${timestamp}.${body}`);
  const signatures = await Promise.all(secrets.map((secret) => sign(secret, content)));
  return {
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

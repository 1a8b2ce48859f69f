/**
 * The Worker's secrets, one per purpose, each rotatable on its own
 * (docs/conventions.md#one-secret-per-purpose): by their configuration field, the environment
 * variable that holds each. Their values are read and checked in `src/config.ts`; what each signs
 * or seals is in docs/configuration.md.
 */
export const SECRETS = {
  cursorSecret: "CURSOR_SECRET",
  playbackSecret: "PLAYBACK_SECRET",
  uploadUrlSecret: "UPLOAD_URL_SECRET",
  idempotencySecret: "IDEMPOTENCY_SECRET",
  callbackSecret: "ENCODER_CALLBACK_SECRET",
} as const;

/**
 * A secret as configured: `current` makes every new signature or ciphertext, and while `previous`
 * is set (`<NAME>_PREVIOUS`, the value before a rotation) what it made is still accepted, so a
 * rotation voids nothing in flight (docs/deploy.md).
 */
export type RotatingSecret = { current: string; previous: string | null };

/** The values a signature or ciphertext may have been made with, the current first. */
export function acceptedSecrets(secret: RotatingSecret): string[] {
  return secret.previous === null ? [secret.current] : [secret.current, secret.previous];
}

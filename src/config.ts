import { z } from "zod";
import { type RotatingSecret, SECRETS } from "./lib/secrets";

/**
 * Which engine hears the speech of generated captions (docs/generated-captions.md): Workers AI's
 * Whisper through the `AI` binding, or the encoder's own engine (local development, no account).
 */
export const SPEECH_ENGINES = ["workers-ai", "encoder"] as const;
export type SpeechEngineName = (typeof SPEECH_ENGINES)[number];

const EnvSchema = z.object({
  ENVIRONMENT: z.string().optional(),
  ADMIN_TOKEN: z.string().optional(),
  ALLOWED_ORIGINS: z.string().optional(),
  // "true"/"false" (and 1/0, yes/no, on/off); empty means unset. Anything else fails loudly.
  ALLOW_HTTP_WEBHOOKS: z.preprocess((value) => (value === "" ? undefined : value), z.stringbool().optional()),
  PUBLIC_BASE_URL: z.string().optional(),
  CURSOR_SECRET: z.string().optional(),
  CURSOR_SECRET_PREVIOUS: z.string().optional(),
  PLAYBACK_SECRET: z.string().optional(),
  PLAYBACK_SECRET_PREVIOUS: z.string().optional(),
  UPLOAD_URL_SECRET: z.string().optional(),
  UPLOAD_URL_SECRET_PREVIOUS: z.string().optional(),
  IDEMPOTENCY_SECRET: z.string().optional(),
  IDEMPOTENCY_SECRET_PREVIOUS: z.string().optional(),
  ENCODER_CALLBACK_SECRET: z.string().optional(),
  ENCODER_CALLBACK_SECRET_PREVIOUS: z.string().optional(),
  ENCODER_URL: z.string().optional(),
  ENCODER_TOKEN: z.string().optional(),
  ENCODER_CALLBACK_URL: z.string().optional(),
  ENCODER_SLOTS: z.string().optional(),
  ENCODER_INTERACTIVE_SLOTS: z.string().optional(),
  ENCODER_VIDEO_SLOTS: z.string().optional(),
  SPEECH_ENGINE: z.preprocess(
    (value) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined),
    z.enum(SPEECH_ENGINES).optional(),
  ),
  IMPORT_PACE_WINDOW_SECONDS: z.string().optional(),
});

export type Config = {
  /** "development" only where ENVIRONMENT says so; anything else is held to production's rules. */
  development: boolean;
  /** Null when unset: the operator API then answers 404. */
  adminToken: string | null;
  allowedOrigins: ReadonlySet<string>;
  allowHttpWebhooks: boolean;
  /** Null only in development, where public URLs then use the request's own origin. */
  publicBaseUrl: string | null;
  /** Signs pagination cursors, and nothing else. */
  cursorSecret: RotatingSecret;
  /** Signs playback tokens, and nothing else. */
  playbackSecret: RotatingSecret;
  /** Signs direct (tus) upload URLs, and nothing else. */
  uploadUrlSecret: RotatingSecret;
  /** Encrypts the stored answers of Idempotency-Key requests, and nothing else. */
  idempotencySecret: RotatingSecret;
  /** Signs the encoder's per-attempt callback tokens, and nothing else. */
  callbackSecret: RotatingSecret;
  /**
   * Where encoding jobs go: an encoder program's URL (local development, `npm run dev` sets it), or
   * null for the Cloudflare Container binding `ENCODER` (production).
   */
  encoderUrl: string | null;
  /** The bearer token every encoder wants on its job API (a secret; `npm run dev` makes one). */
  encoderToken: string;
  /** The encoder slots the pool hands out, and the background ones one video may hold. */
  encoderPool: { interactive: number; background: number; perVideo: number };
  /** The origin the encoder calls back: ENCODER_CALLBACK_URL, else PUBLIC_BASE_URL; null when neither is set. */
  callbackOrigin: string | null;
  /** SPEECH_ENGINE: who hears the speech of generated captions (unset: Workers AI). */
  speechEngine: SpeechEngineName;
  /**
   * The window of an import's pace in development (IMPORT_PACE_WINDOW_SECONDS), so the end-to-end
   * tests see an import end by its clock in seconds; null (the 60 s of docs/imports.md) elsewhere.
   */
  importPaceWindowMs: number | null;
};

/** The shortest secret accepted for the operator token and the cursor key. */
export const MIN_SECRET_LENGTH = 32;

/** A configuration the Worker refuses to run with; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

const cache = new WeakMap<object, Config>();

function parseConfig(env: Env): Config {
  const vars = EnvSchema.parse(env);
  const development = vars.ENVIRONMENT?.trim().toLowerCase() === "development";
  const adminToken = vars.ADMIN_TOKEN?.trim() || null;
  if (adminToken && !development && adminToken.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_SECRET_LENGTH} characters outside development`);
  }
  const secrets = Object.fromEntries(
    Object.entries(SECRETS).map(([field, name]) => [field, requiredSecret(name, vars)]),
  ) as Record<keyof typeof SECRETS, RotatingSecret>;
  const base = vars.PUBLIC_BASE_URL?.trim();
  if (!base && !development) {
    throw new ConfigError("PUBLIC_BASE_URL must be set outside development (the origin of public URLs)");
  }
  const publicBaseUrl = base ? originOf("PUBLIC_BASE_URL", base) : null;
  const encoderUrl = vars.ENCODER_URL?.trim() ? originOf("ENCODER_URL", vars.ENCODER_URL.trim()) : null;
  const callback = vars.ENCODER_CALLBACK_URL?.trim();
  return {
    development,
    adminToken,
    allowedOrigins: new Set(
      (vars.ALLOWED_ORIGINS ?? "")
        .split(",")
        .map((origin) => origin.trim().replace(/\/$/, ""))
        .filter(Boolean),
    ),
    allowHttpWebhooks: vars.ALLOW_HTTP_WEBHOOKS ?? false,
    publicBaseUrl,
    ...secrets,
    encoderUrl,
    encoderToken: encoderToken(vars.ENCODER_TOKEN),
    encoderPool: {
      background: slotCount("ENCODER_SLOTS", vars.ENCODER_SLOTS),
      interactive: slotCount("ENCODER_INTERACTIVE_SLOTS", vars.ENCODER_INTERACTIVE_SLOTS),
      perVideo: slotCount("ENCODER_VIDEO_SLOTS", vars.ENCODER_VIDEO_SLOTS),
    },
    callbackOrigin: callback ? originOf("ENCODER_CALLBACK_URL", callback) : publicBaseUrl,
    speechEngine: vars.SPEECH_ENGINE ?? "workers-ai",
    importPaceWindowMs: importPaceWindow(vars.IMPORT_PACE_WINDOW_SECONDS, development),
  };
}

/** IMPORT_PACE_WINDOW_SECONDS: a whole number of seconds from 1 to 60, in development only. */
function importPaceWindow(value: string | undefined, development: boolean): number | null {
  if (value === undefined || value.trim() === "") return null;
  if (!development) {
    throw new ConfigError("IMPORT_PACE_WINDOW_SECONDS is for development only: elsewhere an import's pace is 60 s");
  }
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 60) {
    throw new ConfigError("IMPORT_PACE_WINDOW_SECONDS must be a whole number from 1 to 60");
  }
  return seconds * 1000;
}

/**
 * A secret every environment must set, long enough to resist guessing, with the value it replaced
 * (`<name>_PREVIOUS`, optional; as long, when set).
 */
function requiredSecret(name: (typeof SECRETS)[keyof typeof SECRETS], vars: z.infer<typeof EnvSchema>): RotatingSecret {
  const current = vars[name]?.trim() ?? "";
  if (current.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${name} must be set, at least ${MIN_SECRET_LENGTH} characters`);
  }
  const previous = vars[`${name}_PREVIOUS`]?.trim() || null;
  if (previous !== null && previous.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${name}_PREVIOUS, when set, must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  return { current, previous };
}

/**
 * The encoder's job API token: shared with the encoder (which is given it when it starts), so it
 * is not among the Worker's own signing secrets; a new value takes effect as the encoders restart
 * with it (docs/deploy.md).
 */
function encoderToken(value: string | undefined): string {
  const token = value?.trim() ?? "";
  if (token.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`ENCODER_TOKEN must be set, at least ${MIN_SECRET_LENGTH} characters`);
  }
  return token;
}

/** A number of encoder slots: a whole number from 1 to 1000 (an unset one is 1). */
function slotCount(name: string, value: string | undefined): number {
  if (value === undefined || value.trim() === "") return 1;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    throw new ConfigError(`${name} must be a whole number from 1 to 1000`);
  }
  return count;
}

function originOf(name: string, value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    throw new ConfigError(`${name} must be an absolute URL such as https://api.example.com`);
  }
}

/** Reads the variables once per environment object; a value it refuses fails loudly, naming it. */
export function readConfig(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const config = parseConfig(env);
  cache.set(env, config);
  return config;
}

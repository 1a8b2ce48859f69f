import { z } from "zod";

const EnvSchema = z.object({
  ENVIRONMENT: z.string().optional(),
  ADMIN_TOKEN: z.string().optional(),
  ALLOWED_ORIGINS: z.string().optional(),
  // "true"/"false" (and 1/0, yes/no, on/off); empty means unset. Anything else fails loudly.
  ALLOW_HTTP_WEBHOOKS: z.preprocess((value) => (value === "" ? undefined : value), z.stringbool().optional()),
  PUBLIC_BASE_URL: z.string().optional(),
  CURSOR_SECRET: z.string().optional(),
  PLAYBACK_SECRET: z.string().optional(),
  ENCODER_URL: z.string().optional(),
  ENCODER_TOKEN: z.string().optional(),
  ENCODER_CALLBACK_URL: z.string().optional(),
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
  /** Signs pagination cursors. */
  cursorSecret: string;
  /** Signs playback tokens and the encoder's callback tokens. */
  playbackSecret: string;
  /**
   * Where encoding jobs go: an encoder program's URL (local development, `npm run dev` sets it), or
   * null for the Cloudflare Container binding `ENCODER` (production).
   */
  encoderUrl: string | null;
  /** The bearer token the encoder at `encoderUrl` wants, if it wants one. */
  encoderToken: string | null;
  /** The origin the encoder calls back: ENCODER_CALLBACK_URL, else PUBLIC_BASE_URL; null when neither is set. */
  callbackOrigin: string | null;
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
  const cursorSecret = requiredSecret("CURSOR_SECRET", vars.CURSOR_SECRET);
  const playbackSecret = requiredSecret("PLAYBACK_SECRET", vars.PLAYBACK_SECRET);
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
    cursorSecret,
    playbackSecret,
    encoderUrl,
    encoderToken: vars.ENCODER_TOKEN?.trim() || null,
    callbackOrigin: callback ? originOf("ENCODER_CALLBACK_URL", callback) : publicBaseUrl,
  };
}

/** A secret every environment must set, long enough to resist guessing. */
function requiredSecret(name: string, value: string | undefined): string {
  const secret = value?.trim() ?? "";
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${name} must be set, at least ${MIN_SECRET_LENGTH} characters`);
  }
  return secret;
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

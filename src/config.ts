import { z } from "zod";

const EnvSchema = z.object({
  ADMIN_TOKEN: z.string().optional(),
  ALLOWED_ORIGINS: z.string().optional(),
  ALLOW_HTTP_WEBHOOKS: z.string().optional(),
  PUBLIC_BASE_URL: z.string().optional(),
});

export type Config = {
  /** Null when unset: the operator API then answers 404. */
  adminToken: string | null;
  allowedOrigins: ReadonlySet<string>;
  allowHttpWebhooks: boolean;
  /** Null when unset: public URLs then use the request's own origin. */
  publicBaseUrl: string | null;
};

const cache = new WeakMap<object, Config>();

/** Reads the variables once per environment object; a malformed value fails loudly at startup. */
export function readConfig(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const vars = EnvSchema.parse(env);
  const publicBaseUrl = vars.PUBLIC_BASE_URL?.trim();
  const config: Config = {
    adminToken: vars.ADMIN_TOKEN?.trim() || null,
    allowedOrigins: new Set(
      (vars.ALLOWED_ORIGINS ?? "")
        .split(",")
        .map((origin) => origin.trim().replace(/\/$/, ""))
        .filter(Boolean),
    ),
    allowHttpWebhooks: vars.ALLOW_HTTP_WEBHOOKS?.trim().toLowerCase() === "true",
    publicBaseUrl: publicBaseUrl ? new URL(publicBaseUrl).origin : null,
  };
  cache.set(env, config);
  return config;
}

import type { Context } from "hono";
import type { AppEnv } from "./context";

/** The origin of public URLs: PUBLIC_BASE_URL when set, else the request's own origin. */
export function publicOrigin<E extends AppEnv>(c: Context<E>): string {
  return c.var.config.publicBaseUrl ?? new URL(c.req.url).origin;
}

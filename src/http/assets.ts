import type { Context } from "hono";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

/** Where the static files (`public/`, wrangler.toml's [assets]) are served: the vendored scripts. */
export const ASSETS_PATH = "/vendor";

/**
 * A static file from the Worker's assets. Every request reaches the Worker first (wrangler.toml's
 * `run_worker_first`: under `wrangler dev` asking the assets first costs every API request a hop),
 * and only these paths are handed to the assets; one with no file answers as any unknown path does.
 */
export async function serveAsset(c: Context<AppEnv>): Promise<Response> {
  const response = await c.env.ASSETS.fetch(c.req.raw);
  if (response.status !== 404) return response;
  await response.body?.cancel();
  throw new ApiError("not_found");
}

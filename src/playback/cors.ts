import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context";

/**
 * CORS of every `/play/` answer, errors and preflights included (docs/encoding.md): any origin may
 * play, with no credential but the URL. Each router under `/play/` says which methods and request
 * headers it takes and which answer headers a page may read, and mounts both parts: `headers` on
 * its paths, `preflight` as their OPTIONS route. (hono/cors, which `/v1` uses, answers preflights
 * inside its middleware: OPTIONS would then be missing from the route table that a 405's `Allow` is
 * read from.)
 */
export function playCors(rules: { methods: string[]; headers: string[]; expose: string[] }): {
  headers: MiddlewareHandler<AppEnv>;
  preflight: (c: Context<AppEnv>) => Response;
} {
  return {
    headers: async (c, next) => {
      await next();
      c.res.headers.set("access-control-allow-origin", "*");
      c.res.headers.set("access-control-expose-headers", rules.expose.join(", "));
    },
    preflight: (c) =>
      c.body(null, 204, {
        "access-control-allow-methods": rules.methods.join(", "),
        "access-control-allow-headers": rules.headers.join(", "),
        "access-control-max-age": "86400",
      }),
  };
}

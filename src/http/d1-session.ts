import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";

/** The shape of a D1 bookmark; anything else a client sends is ignored, never an error. */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const PRIMARY_ONLY = "/internal/";

/**
 * Runs every query of a request through one D1 session (the Sessions API), so reads may be served
 * by a nearby replica while a request still sees its own writes:
 * - a request that may write starts at the primary ("first-primary"), so the checks before its
 *   write (credential, revocation, ownership, the lease) read the latest state;
 * - a read starts wherever is nearest ("first-unconstrained"), or, given a client's
 *   `x-d1-bookmark`, at a replica at least as new as that bookmark (read-your-writes);
 * - the encoder's calls back (`/internal/`) start at the primary whatever their method: each asks
 *   whether its attempt is still the running one, which a lagging replica could deny a moment
 *   after the attempt started.
 * The bookmark the request ends at is returned in `x-d1-bookmark` on every `/v1` answer that
 * touched D1.
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const sent = c.req.header("x-d1-bookmark")?.trim().toLowerCase();
  const start =
    !SAFE_METHODS.has(c.req.method) || c.req.path.startsWith(PRIMARY_ONLY)
      ? "first-primary"
      : sent && BOOKMARK.test(sent)
        ? sent
        : "first-unconstrained";
  const session = c.env.DB.withSession(start);
  c.set("db", session);
  await next();
  const bookmark = session.getBookmark();
  if (bookmark && c.req.path.startsWith("/v1/")) c.res.headers.set("x-d1-bookmark", bookmark);
});

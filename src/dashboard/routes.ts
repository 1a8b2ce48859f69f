import { type Context, Hono } from "hono";
import type { AppEnv } from "../http/context";
import { publicOrigin } from "../http/public-url";
import { contentSecurityPolicy, DASHBOARD_PATH, dashboardPage, prefersHtml } from "./page";

/**
 * `/dashboard` and every path under it answer the same page (the dashboard routes in the browser);
 * a browser's `GET /` is sent there, and every other client falls through to `GET /`'s JSON.
 */
export const dashboardRoutes = new Hono<AppEnv>()
  .get("/", async (c, next) => {
    // Either answer depends on Accept: a cache in front must keep them apart.
    c.header("Vary", "Accept");
    if (!prefersHtml(c.req.header("accept"))) return next();
    return c.redirect(DASHBOARD_PATH, 302);
  })
  .get(DASHBOARD_PATH, page)
  .get(`${DASHBOARD_PATH}/*`, page);

function page(c: Context<AppEnv>) {
  c.header("Content-Security-Policy", contentSecurityPolicy(publicOrigin(c), new URL(c.req.url).origin));
  c.header("Cache-Control", "no-cache");
  c.header("Referrer-Policy", "same-origin");
  return c.html(dashboardPage());
}

import type { Hono, NotFoundHandler } from "hono";
import type { AppEnv } from "./context";
import { ApiError, errorResponse } from "./errors";

type RoutePattern = { method: string; pattern: RegExp };

/** A route path as a pattern: `:name` is one segment, a trailing `*` anything below (Hono's wildcard). */
function compile(path: string): RegExp {
  const wildcard = path.endsWith("/*");
  const source = (wildcard ? path.slice(0, -2) : path)
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}${wildcard ? "(/.*)?" : "/?"}$`);
}

/**
 * Unknown paths answer 404 not_found; known paths with another method answer 405 with `Allow`.
 * The route table is read from the app itself, so it cannot drift from the routes.
 */
export function notFoundHandler(app: Hono<AppEnv>): NotFoundHandler<AppEnv> {
  let patterns: RoutePattern[] | undefined;
  return (c) => {
    patterns ??= app.routes
      .filter((route) => route.method !== "ALL")
      .map((route) => ({ method: route.method.toUpperCase(), pattern: compile(route.path) }));
    const allowed = new Set(patterns.filter((route) => route.pattern.test(c.req.path)).map((route) => route.method));
    if (allowed.size === 0) return errorResponse(c, new ApiError("not_found"));
    if (allowed.has("GET")) allowed.add("HEAD");
    return errorResponse(c, new ApiError("method_not_allowed", { headers: { Allow: [...allowed].sort().join(", ") } }));
  };
}

/**
 * For a path one route owns outright (`/v1/videos/bulk`) but that a route with a path parameter
 * would also match under other methods (`/v1/videos/{id}`): any method but the owner's answers 405
 * with `Allow`, not the parameter route's not-found. Mount it right after the owning route.
 */
export function onlyMethods(methods: string[]): () => never {
  const allowed = new Set(methods.map((method) => method.toUpperCase()));
  if (allowed.has("GET")) allowed.add("HEAD");
  return () => {
    throw new ApiError("method_not_allowed", { headers: { Allow: [...allowed].sort().join(", ") } });
  };
}

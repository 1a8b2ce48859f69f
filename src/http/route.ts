import { createRoute, type RouteConfig, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "./errors";
import { errorResponses } from "./schemas";

/** One way of authenticating an operation, as the OpenAPI document names it, with its scopes. */
export type SecurityRequirement = Record<"apiKey" | "sessionCookie" | "operatorToken", string[]>;

/**
 * What a middleware may answer instead of the handler, and the credentials it takes, for the
 * OpenAPI document.
 */
type ZodObject = z.ZodObject<z.ZodRawShape>;

type Documentation = {
  errorCodes?: (method: string) => ErrorCode[];
  security?: () => Partial<SecurityRequirement>[];
  /** Request headers the middleware reads, for the route's parameters. */
  headers?: () => ZodObject;
};
// Documentation is kept apart from MiddlewareHandler (whose environment defaults to `any`), so a
// documented middleware keeps the environment it declares for the handlers behind it.
export type DocumentedMiddleware = MiddlewareHandler & Documentation;

export function documented<M extends MiddlewareHandler>(
  middleware: M,
  errorCodes: (method: string) => ErrorCode[],
  security?: () => Partial<SecurityRequirement>[],
  headers?: () => ZodObject,
): M & Documentation {
  return Object.assign(middleware, { errorCodes, ...(security ? { security } : {}), ...(headers ? { headers } : {}) });
}

/** Every route made by `route()`, for tests that check the document against the code. */
export const ROUTES: RouteConfig[] = [];

/**
 * createRoute, with what the route's own middleware declares: its error responses (plus the
 * handler's `errors`) and its security (none when no middleware authenticates), so the document
 * cannot drift from what the code does.
 */
export function route<R extends RouteConfig & { operationId: string }>(config: R, errors: ErrorCode[] = []) {
  const middleware = [config.middleware ?? []].flat() as DocumentedMiddleware[];
  const codes = new Set([...middleware.flatMap((m) => m.errorCodes?.(config.method) ?? []), ...errors]);
  const security = middleware.find((m) => m.security)?.security?.() ?? [];
  // The request headers the route's middleware reads, beside the route's own.
  const read = middleware.flatMap((m) => (m.headers ? [m.headers()] : []));
  const own = config.request?.headers as ZodObject | undefined;
  const headers = [...(own ? [own] : []), ...read].reduce<ZodObject | undefined>(
    (all, next) => (all ? all.extend(next.shape) : next),
    undefined,
  );
  const created = createRoute({
    ...config,
    security,
    responses: { ...errorResponses(...codes), ...config.responses },
  });
  // Set after createRoute, whose inferred type (what handlers see) stays the route's own.
  if (headers && read.length > 0) Object.assign(created, { request: { ...created.request, headers } });
  ROUTES.push(created);
  return created;
}

import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "./errors";
import { errorResponses } from "./schemas";

/** What a middleware may answer instead of the handler, for the OpenAPI document. */
export type DocumentedMiddleware = MiddlewareHandler & { errorCodes?: (method: string) => ErrorCode[] };

export function documented<M extends MiddlewareHandler>(
  middleware: M,
  errorCodes: (method: string) => ErrorCode[],
): M & DocumentedMiddleware {
  return Object.assign(middleware, { errorCodes });
}

/**
 * createRoute, with the error responses documented from the codes the route's own middleware can
 * answer plus the handler's `errors`, so the document cannot drift from what the code sends.
 */
export function route<R extends RouteConfig>(config: R, errors: ErrorCode[] = []) {
  const middleware = [config.middleware ?? []].flat() as DocumentedMiddleware[];
  const codes = new Set([...middleware.flatMap((m) => m.errorCodes?.(config.method) ?? []), ...errors]);
  return createRoute({ ...config, responses: { ...errorResponses(...codes), ...config.responses } });
}

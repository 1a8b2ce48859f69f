import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "./errors";
import { errorResponses, headerRefs, type ResponseHeaderName } from "./schemas";

/** One way of authenticating an operation, as the OpenAPI document names it, with its scopes. */
export type SecurityRequirement = Record<"apiKey" | "sessionCookie" | "operatorToken", string[]>;

/**
 * What a middleware may answer instead of the handler, the credentials it takes, the request
 * headers it reads and the response headers it sets, for the OpenAPI document.
 */
type ZodObject = z.ZodObject<z.ZodRawShape>;

type Documentation = {
  errorCodes?: (method: string) => ErrorCode[];
  security?: () => Partial<SecurityRequirement>[];
  /** Request headers the middleware reads, for the route's parameters. */
  headers?: () => ZodObject;
  /** Response headers the middleware sets on an answer of `status` ("200", "429"…). */
  responseHeaders?: (status: string) => ResponseHeaderName[];
};
// Documentation is kept apart from MiddlewareHandler (whose environment defaults to `any`), so a
// documented middleware keeps the environment it declares for the handlers behind it.
export type DocumentedMiddleware = MiddlewareHandler & Documentation;

export function documented<M extends MiddlewareHandler>(
  middleware: M,
  errorCodes: (method: string) => ErrorCode[],
  security?: () => Partial<SecurityRequirement>[],
  headers?: () => ZodObject,
  responseHeaders?: (status: string) => ResponseHeaderName[],
): M & Documentation {
  return Object.assign(middleware, {
    errorCodes,
    ...(security ? { security } : {}),
    ...(headers ? { headers } : {}),
    ...(responseHeaders ? { responseHeaders } : {}),
  });
}

/** Every route made by `route()`, for tests that check the document against the code. */
export const ROUTES: RouteConfig[] = [];

/**
 * JSON request bodies that a route reads itself, by the name of the component that documents them:
 * a route that takes a file's bytes of any media type as well as JSON cannot let the framework's
 * validators, which refuse what they do not declare, read its body. For the tests that check the
 * document against the code.
 */
export const SELF_READ_BODIES = new Map<string, z.ZodType>();

/**
 * The OpenAPI media type object of a JSON body the route reads itself (`SELF_READ_BODIES`): a
 * reference to `name`, the component the route's router registers from `schema`.
 */
export function selfReadJson(name: string, schema: z.ZodType) {
  SELF_READ_BODIES.set(name, schema);
  return { schema: { $ref: `#/components/schemas/${name}` } };
}

/** What the app's own middleware (src/http/app.ts) does on every /v1 request, for every route. */
const V1_REQUEST_HEADERS = z.object({
  "x-d1-bookmark": z
    .string()
    .optional()
    .openapi({
      description:
        "A bookmark from an earlier response's `x-d1-bookmark`: this request then sees at least the writes it " +
        "covers (read-your-writes across replicas). A malformed one is ignored.",
      example: "00000085-00000024-00005071-8ab1f3c1e5c43b5f4bb0d8a6c2f3ebd1",
    }),
});
const V1_RESPONSE_HEADERS: ResponseHeaderName[] = ["x-request-id", "Cache-Control", "x-d1-bookmark"];

/** The operation's credentials in a sentence, for its description. */
function authSentence(security: Partial<SecurityRequirement>[]): string {
  if (security.length === 0) return "**Auth:** none.";
  const ways = security.map((requirement) =>
    Object.entries(requirement)
      .map(([scheme, scopes]) => {
        if (scheme === "apiKey") return `an API key with \`${scopes?.join("` or `") || "any"}\` scope`;
        if (scheme === "sessionCookie") return "the session cookie `svc_session`";
        return "the operator token";
      })
      .join(" and "),
  );
  const keyOrCookie = ways.some((way) => way.startsWith("an API key")) && ways.some((way) => way.includes("cookie"));
  const note = keyOrCookie
    ? " (with the cookie, video operations also take `?projectId=`, and `?mode=test` or `?mode=live` acts in " +
      "that mode only; a key acts in its own)"
    : "";
  return `**Auth:** ${ways.join(", or ")}${note}.`;
}

/**
 * createRoute, with what the route's own middleware declares: its error responses (plus the
 * handler's `errors`, and `500 internal_error`, which any operation may answer), its security
 * (none when no middleware authenticates), the request headers it reads and the response headers
 * it sets, with those the app sets on every response; so the document cannot drift from what the
 * code does, and a route added later gets the same.
 */
export function route<R extends RouteConfig & { operationId: string }>(config: R, errors: ErrorCode[] = []) {
  const middleware = [config.middleware ?? []].flat() as DocumentedMiddleware[];
  const codes = new Set<ErrorCode>([
    ...middleware.flatMap((m) => m.errorCodes?.(config.method) ?? []),
    ...errors,
    "internal_error",
  ]);
  const security = middleware.find((m) => m.security)?.security?.() ?? [];
  const v1 = config.path.startsWith("/v1/");
  // The request headers the route's middleware reads, beside the route's own.
  const read = [...(v1 ? [V1_REQUEST_HEADERS] : []), ...middleware.flatMap((m) => (m.headers ? [m.headers()] : []))];
  const own = config.request?.headers as ZodObject | undefined;
  const headers = [...(own ? [own] : []), ...read].reduce<ZodObject | undefined>(
    (all, next) => (all ? all.extend(next.shape) : next),
    undefined,
  );
  const responses = Object.fromEntries(
    Object.entries({ ...errorResponses(...codes), ...config.responses }).map(([status, response]) => {
      const names = [
        ...(v1 ? V1_RESPONSE_HEADERS : ["x-request-id" as const]),
        ...middleware.flatMap((m) => m.responseHeaders?.(status) ?? []),
      ];
      const declared = (response as { headers?: object }).headers ?? {};
      return [status, { ...response, headers: { ...headerRefs(names), ...declared } }];
    }),
  );
  const created = createRoute({
    ...config,
    description: [config.description, authSentence(security)].filter(Boolean).join("\n\n"),
    security,
    responses: { ...errorResponses(...codes), ...config.responses },
  });
  // Set after createRoute, whose inferred type (what handlers see) stays the route's own.
  Object.assign(created, { responses });
  if (headers && read.length > 0) Object.assign(created, { request: { ...created.request, headers } });
  ROUTES.push(created);
  return created;
}

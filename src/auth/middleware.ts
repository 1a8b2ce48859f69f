import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/context";
import { bearerToken } from "../http/credentials";
import { ApiError, type ErrorCode } from "../http/errors";
import { documented } from "../http/route";
import { isMode, type Mode, type Tenant } from "../lib/tenant";
import { parseUlid } from "../lib/ulid";
import type { AuthedEnv, Caller, ProjectEnv, Scope, TenantEnv } from "./context";
import { findKeyCaller, KEY_PATTERN, touchApiKey } from "./key-queries";
import { findSession, SESSION_COOKIE } from "./session-queries";

type ProjectSource =
  /** Video endpoints: `?projectId=` under cookie auth, the key's project under key auth. */
  | { from: "query" }
  /** `/v1/projects/{param}/…`: the project must be the caller's, else `notFound`. */
  | { from: "path"; param: string; notFound: ErrorCode };

export type AuthOptions = {
  /** "session": cookie only (an API key is refused with 401). "any": cookie or API key. */
  accept: "session" | "any";
  /** The scope an API key needs. */
  scope?: Scope;
  /** Whether the account must be approved; only reading the account and logging out skip it. */
  approval?: boolean;
  project?: ProjectSource;
  /**
   * The operation acts in a mode (docs/api-guide.md#test-mode-and-going-live): with a project
   * source, sets `tenant` (the project and the mode) beside `projectId`, and reads `?mode=` under a
   * session cookie.
   */
  modes?: boolean;
};

/** What the middleware may set; the overloads of `authenticate` say which a route gets. */
type AnyProjectEnv = {
  Bindings: Env;
  Variables: AuthedEnv["Variables"] & { projectId: string; tenant: Tenant };
};

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type Resolved = { caller: Caller; ownsProject: boolean };

/** Step 1. For a session, also learns whether it owns `projectId`, in the same query. */
async function resolveCaller<E extends AppEnv>(
  c: Context<E>,
  accept: AuthOptions["accept"],
  projectId: string | null,
): Promise<Resolved> {
  const now = Date.now();
  const authorization = c.req.header("authorization");
  if (authorization !== undefined) {
    // When the header is present it alone decides, even if a valid cookie is also sent.
    const key = bearerToken(authorization);
    if (accept !== "any" || !key || !KEY_PATTERN.test(key)) throw new ApiError("unauthorized");
    const found = await findKeyCaller(c.var.db, key);
    if (!found) throw new ApiError("unauthorized");
    c.executionCtx.waitUntil(touchApiKey(c.var.db, found, now).catch(() => {}));
    return { caller: { kind: "key", ...found }, ownsProject: found.projectId === projectId };
  }
  const token = getCookie(c, SESSION_COOKIE);
  const session = token ? await findSession(c.var.db, token, now, projectId) : null;
  if (!session) throw new ApiError("unauthorized");
  const { ownsProject, ...caller } = session;
  return { caller: { kind: "session", ...caller }, ownsProject };
}

/**
 * Cookie-authenticated writes from a browser must come from this service (the request's own origin,
 * or PUBLIC_BASE_URL's: the dashboard it serves, with no configuration) or an allowed origin.
 */
function checkOrigin<E extends AppEnv>(c: Context<E>): void {
  const origin = c.req.header("origin");
  if (origin === undefined || !UNSAFE_METHODS.has(c.req.method)) return;
  const normalized = origin.replace(/\/$/, "");
  const { allowedOrigins, publicBaseUrl } = c.var.config;
  if (allowedOrigins.has(normalized) || normalized === new URL(c.req.url).origin || normalized === publicBaseUrl)
    return;
  throw new ApiError("forbidden_origin");
}

/** The project id the request names, canonical, or null when absent or not a ULID. */
function requestedProject<E extends AppEnv>(c: Context<E>, source: ProjectSource | undefined): string | null {
  if (!source) return null;
  return parseUlid(source.from === "query" ? c.req.query("projectId") : c.req.param(source.param));
}

/** Step 4: the project the request acts on. */
function resolveProject(caller: Caller, source: ProjectSource, projectId: string | null, owns: boolean): string {
  if (source.from === "query") {
    if (caller.kind === "key") return caller.projectId;
    if (!projectId) throw new ApiError("invalid_project_id");
    if (!owns) throw new ApiError("not_found");
    return projectId;
  }
  if (!projectId || !owns) throw new ApiError(source.notFound);
  return projectId;
}

/**
 * The mode the request acts in (docs/api-guide.md#test-mode-and-going-live): an API key's own,
 * whatever `?mode=` says (as `projectId` is ignored under key auth); a session's `?mode=`, or both
 * when it sends none. A `mode` other than one `live` or `test` is `invalid_query` under either
 * credential.
 */
function requestMode<E extends AppEnv>(c: Context<E>, caller: Caller): Mode | "both" {
  const asked = c.req.queries("mode") ?? [];
  const [value] = asked;
  if (asked.length > 1 || (value !== undefined && !isMode(value))) {
    throw new ApiError("invalid_query", { details: [{ path: "mode", message: 'must be "live" or "test"' }] });
  }
  if (caller.kind === "key") return caller.mode;
  return value ?? "both";
}

/**
 * Steps 1–4 of the checks, in the order docs/api-rules.md#the-order-of-checks gives: credential,
 * approval, scope, project (with the mode, for operations that act in one). Sets `caller` and, when
 * a project source is given, `projectId`, and `tenant` for an operation with `modes`: the
 * middleware's type says which, so only a handler behind it can read them.
 */
export function authenticate(
  options: AuthOptions & { project: ProjectSource; modes: true },
): MiddlewareHandler<TenantEnv>;
export function authenticate(
  options: AuthOptions & { project: ProjectSource; modes?: false },
): MiddlewareHandler<ProjectEnv>;
export function authenticate(
  options: AuthOptions & { project?: undefined; modes?: false },
): MiddlewareHandler<AuthedEnv>;
export function authenticate(
  options: AuthOptions,
): MiddlewareHandler<TenantEnv> | MiddlewareHandler<ProjectEnv> | MiddlewareHandler<AuthedEnv> {
  const middleware = createMiddleware<AnyProjectEnv>(async (c, next) => {
    const projectId = requestedProject(c, options.project);
    const { caller, ownsProject } = await resolveCaller(c, options.accept, projectId);
    if (caller.kind === "session") checkOrigin(c);
    if ((options.approval ?? true) && !caller.approved) throw new ApiError("account_not_approved");
    if (caller.kind === "key" && options.scope) {
      const allowed = options.scope === "read" ? caller.scopes.length > 0 : caller.scopes.includes("write");
      if (!allowed) throw new ApiError("insufficient_scope");
    }
    c.set("caller", caller);
    if (options.project) {
      const project = resolveProject(caller, options.project, projectId, ownsProject);
      c.set("projectId", project);
      if (options.modes) c.set("tenant", { projectId: project, mode: requestMode(c, caller) });
    }
    await next();
  });
  // The overloads say which variables a route behind it can read; the one body sets either.
  return documented(
    middleware as unknown as MiddlewareHandler<TenantEnv>,
    (method) => authErrorCodes(options, method),
    () =>
      options.accept === "session"
        ? [{ sessionCookie: [] }]
        : [{ apiKey: [options.scope ?? "read"] }, { sessionCookie: [] }],
  );
}

/** The codes `authenticate(options)` can answer for a request of `method`. */
function authErrorCodes(options: AuthOptions, method: string): ErrorCode[] {
  const codes: ErrorCode[] = ["unauthorized"];
  if (UNSAFE_METHODS.has(method.toUpperCase())) codes.push("forbidden_origin");
  if (options.approval ?? true) codes.push("account_not_approved");
  if (options.scope) codes.push("insufficient_scope");
  if (options.project?.from === "query") codes.push("invalid_project_id", "not_found");
  if (options.project?.from === "path") codes.push(options.project.notFound);
  if (options.modes) codes.push("invalid_query");
  return codes;
}

/** The session behind a cookie-only route. */
export function sessionOf(c: Context<AuthedEnv>): Extract<Caller, { kind: "session" }> {
  const caller = c.var.caller;
  if (caller.kind !== "session") throw new Error("route expected a session caller");
  return caller;
}

import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { findKeyCaller, KEY_PATTERN, touchApiKey } from "../api-keys/queries";
import type { AppEnv } from "../http/context";
import { bearerToken } from "../http/credentials";
import { ApiError, type ErrorCode } from "../http/errors";
import { documented } from "../http/route";
import { parseUlid } from "../lib/ulid";
import type { AuthedEnv, Caller, ProjectEnv, Scope } from "./context";
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

/** Cookie-authenticated writes from a browser must come from this service or an allowed origin. */
function checkOrigin<E extends AppEnv>(c: Context<E>): void {
  const origin = c.req.header("origin");
  if (origin === undefined || !UNSAFE_METHODS.has(c.req.method)) return;
  const normalized = origin.replace(/\/$/, "");
  if (c.var.config.allowedOrigins.has(normalized) || normalized === new URL(c.req.url).origin) return;
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
 * Steps 1–4 of the contract's checks, in its order: credential, approval, scope, project.
 * Sets `caller` and, when a project source is given, `projectId`: the middleware's type says
 * which, so only a handler behind it can read them.
 */
export function authenticate(options: AuthOptions & { project: ProjectSource }): MiddlewareHandler<ProjectEnv>;
export function authenticate(options: AuthOptions & { project?: undefined }): MiddlewareHandler<AuthedEnv>;
export function authenticate(options: AuthOptions): MiddlewareHandler<ProjectEnv> | MiddlewareHandler<AuthedEnv> {
  const middleware = createMiddleware<ProjectEnv>(async (c, next) => {
    const projectId = requestedProject(c, options.project);
    const { caller, ownsProject } = await resolveCaller(c, options.accept, projectId);
    if (caller.kind === "session") checkOrigin(c);
    if ((options.approval ?? true) && !caller.approved) throw new ApiError("account_not_approved");
    if (caller.kind === "key" && options.scope) {
      const allowed = options.scope === "read" ? caller.scopes.length > 0 : caller.scopes.includes("write");
      if (!allowed) throw new ApiError("insufficient_scope");
    }
    c.set("caller", caller);
    if (options.project) c.set("projectId", resolveProject(caller, options.project, projectId, ownsProject));
    await next();
  });
  return documented(
    middleware,
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
  return codes;
}

/** The session behind a cookie-only route. */
export function sessionOf(c: Context<AuthedEnv>): Extract<Caller, { kind: "session" }> {
  const caller = c.var.caller;
  if (caller.kind !== "session") throw new Error("route expected a session caller");
  return caller;
}

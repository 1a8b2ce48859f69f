import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { findKeyCaller, KEY_PATTERN, touchApiKey } from "../api-keys/queries";
import type { AppEnv, Caller, Scope } from "../http/context";
import { ApiError, type ErrorCode } from "../http/errors";
import { parseUlid } from "../lib/ulid";
import { findOwnedProject } from "../projects/queries";
import { findSession, SESSION_COOKIE } from "./sessions";

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

async function resolveCaller(c: Context<AppEnv>, accept: AuthOptions["accept"]): Promise<Caller> {
  const now = Date.now();
  const authorization = c.req.header("authorization");
  if (authorization !== undefined) {
    // When the header is present it alone decides, even if a valid cookie is also sent.
    const match = /^Bearer (\S+)$/.exec(authorization);
    const key = match?.[1];
    if (accept !== "any" || !key || !KEY_PATTERN.test(key)) throw new ApiError("unauthorized");
    const found = await findKeyCaller(c.env.DB, key);
    if (!found) throw new ApiError("unauthorized");
    c.executionCtx.waitUntil(touchApiKey(c.env.DB, found, now).catch(() => {}));
    return { kind: "key", ...found };
  }
  const token = getCookie(c, SESSION_COOKIE);
  const session = token ? await findSession(c.env.DB, token, now) : null;
  if (!session) throw new ApiError("unauthorized");
  return { kind: "session", ...session };
}

/** Cookie-authenticated writes from a browser must come from this service or an allowed origin. */
function checkOrigin(c: Context<AppEnv>): void {
  const origin = c.req.header("origin");
  if (origin === undefined || !UNSAFE_METHODS.has(c.req.method)) return;
  const normalized = origin.replace(/\/$/, "");
  if (c.var.config.allowedOrigins.has(normalized) || normalized === new URL(c.req.url).origin) return;
  throw new ApiError("forbidden_origin");
}

async function resolveProject(c: Context<AppEnv>, caller: Caller, source: ProjectSource): Promise<string> {
  if (source.from === "query") {
    if (caller.kind === "key") return caller.projectId;
    const projectId = parseUlid(c.req.query("projectId"));
    if (!projectId) throw new ApiError("invalid_project_id");
    if (!(await findOwnedProject(c.env.DB, caller.accountId, projectId))) throw new ApiError("not_found");
    return projectId;
  }
  const projectId = parseUlid(c.req.param(source.param));
  if (!projectId) throw new ApiError(source.notFound);
  const owned =
    caller.kind === "key"
      ? caller.projectId === projectId
      : (await findOwnedProject(c.env.DB, caller.accountId, projectId)) !== null;
  if (!owned) throw new ApiError(source.notFound);
  return projectId;
}

/**
 * Steps 1–4 of the contract's checks, in its order: credential, approval, scope, project.
 * Sets `caller` and, when a project source is given, `projectId`.
 */
export function authenticate(options: AuthOptions) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const caller = await resolveCaller(c, options.accept);
    if (caller.kind === "session") checkOrigin(c);
    if ((options.approval ?? true) && !caller.approved) throw new ApiError("account_not_approved");
    if (caller.kind === "key" && options.scope) {
      const allowed = options.scope === "read" ? caller.scopes.length > 0 : caller.scopes.includes("write");
      if (!allowed) throw new ApiError("insufficient_scope");
    }
    c.set("caller", caller);
    if (options.project) c.set("projectId", await resolveProject(c, caller, options.project));
    await next();
  });
}

/** The session behind a cookie-only route. */
export function sessionOf(c: Context<AppEnv>): Extract<Caller, { kind: "session" }> {
  const caller = c.var.caller;
  if (caller.kind !== "session") throw new Error("route expected a session caller");
  return caller;
}

import { z } from "@hono/zod-openapi";
import type { ErrorCode } from "../http/errors";
import { pathId } from "../http/schemas";
import { MODES } from "../lib/tenant";
import type { Scope } from "./context";
import { authenticate } from "./middleware";

/**
 * Every guard a route puts first, named by what it requires. Routes import these; none builds its
 * own `authenticate(…)`.
 */

/** The path parameter the project guards read: every route under `/v1/projects/{projectId}`. */
export const ProjectPathParams = z.object({ projectId: pathId("project") });

/**
 * The query every operation that acts in a mode takes (docs/api-guide.md#test-mode-and-going-live):
 * read by authentication, documented here.
 */
export const ModeQuerySchema = z.object({
  mode: z
    .enum(MODES)
    .optional()
    .openapi({
      description:
        "Under session-cookie auth: act in this mode only (create objects of it, see only its objects; lists " +
        "narrow to it). Without it a session cookie sees both modes and creates live objects. Ignored under " +
        "API-key auth: a key acts in its own mode (`svc_live_…` live, `svc_test_…` test).",
    }),
});

/** Any session, approved or not: reading one's own account, logging out. */
export const anySession = authenticate({ accept: "session", approval: false });

/** A session of an approved account: projects of the account. */
export const approvedSession = authenticate({ accept: "session" });

/** A session owning the path's `{projectId}` (else `not_found`): project settings, keys. */
export const projectOwnerSession = authenticate({
  accept: "session",
  project: { from: "path", param: "projectId", notFound: "not_found" },
});

/**
 * Video operations: an API key (its project, its mode), or a session with `?projectId=` (and
 * `?mode=`, when it narrows).
 */
export const videoReader = authenticate({ accept: "any", scope: "read", project: { from: "query" }, modes: true });
export const videoWriter = authenticate({ accept: "any", scope: "write", project: { from: "query" }, modes: true });

/**
 * The path's `{projectId}` by a session owning it or by an API key of that project with `scope`;
 * `notFound` answers for any other project. Webhook endpoints act in a mode, as videos do.
 */
export function projectMember(scope: Scope, notFound: ErrorCode) {
  return authenticate({
    accept: "any",
    scope,
    project: { from: "path", param: "projectId", notFound },
    modes: true,
  });
}

import { describe, expect, it } from "vitest";
import {
  ADMIN,
  api,
  bearer,
  clientIp,
  errorCode,
  logIn,
  newKey,
  newProject,
  newSession,
  newWorkspace,
  type Session,
  signUp,
  withCookie,
} from "../helpers";

/**
 * Every protected route, with what it accepts. The same credential checks run against each, so a
 * route that forgets one fails here. `{project}` is replaced by a project of the caller.
 */
type ProtectedRoute = {
  method: string;
  path: string;
  accepts: "session" | "any";
  /** The scope an API key needs, for routes that accept keys. */
  scope?: "read" | "write";
  /** Routes that an unapproved account may still use. */
  skipsApproval?: boolean;
  body?: unknown;
};

const PROTECTED_ROUTES: ProtectedRoute[] = [
  { method: "GET", path: "/v1/account", accepts: "session", skipsApproval: true },
  { method: "POST", path: "/v1/auth/logout", accepts: "session", skipsApproval: true },
  { method: "GET", path: "/v1/projects", accepts: "session" },
  { method: "POST", path: "/v1/projects", accepts: "session", body: { name: "x" } },
  { method: "GET", path: "/v1/projects/{project}", accepts: "session" },
  { method: "DELETE", path: "/v1/projects/{project}", accepts: "session" },
  { method: "GET", path: "/v1/projects/{project}/api-keys", accepts: "session" },
  {
    method: "POST",
    path: "/v1/projects/{project}/api-keys",
    accepts: "session",
    body: { name: "k", scopes: ["read"], mode: "test" },
  },
  { method: "DELETE", path: "/v1/projects/{project}/api-keys/01ARZ3NDEKTSV4RRFFQ69G5FAV", accepts: "session" },
  { method: "GET", path: "/v1/projects/{project}/encoding-settings", accepts: "session" },
  { method: "PATCH", path: "/v1/projects/{project}/encoding-settings", accepts: "session", body: {} },
  { method: "PUT", path: "/v1/projects/{project}/encoding-settings/watermark-image", accepts: "session" },
  { method: "DELETE", path: "/v1/projects/{project}/encoding-settings/watermark-image", accepts: "session" },
  {
    method: "POST",
    path: "/v1/projects/{project}/webhook-endpoints",
    accepts: "any",
    scope: "write",
    body: { url: "https://x.example" },
  },
  { method: "GET", path: "/v1/projects/{project}/webhook-endpoints", accepts: "any", scope: "read" },
  {
    method: "GET",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV",
    accepts: "any",
    scope: "read",
  },
  {
    method: "DELETE",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV",
    accepts: "any",
    scope: "write",
  },
  {
    method: "PATCH",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV",
    accepts: "any",
    scope: "write",
    body: { enabled: false },
  },
  {
    method: "POST",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV/rotate-secret",
    accepts: "any",
    scope: "write",
  },
  {
    method: "GET",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV/deliveries",
    accepts: "any",
    scope: "read",
  },
  {
    method: "POST",
    path: "/v1/projects/{project}/webhook-endpoints/01ARZ3NDEKTSV4RRFFQ69G5FAV/deliveries/01ARZ3NDEKTSV4RRFFQ69G5FAV/retry",
    accepts: "any",
    scope: "write",
  },
  { method: "POST", path: "/v1/videos?projectId={project}", accepts: "any", scope: "write", body: {} },
  { method: "GET", path: "/v1/videos?projectId={project}", accepts: "any", scope: "read" },
  { method: "GET", path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV?projectId={project}", accepts: "any", scope: "read" },
  {
    method: "DELETE",
    path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV?projectId={project}",
    accepts: "any",
    scope: "write",
  },
  {
    method: "PUT",
    path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV/upload/parts/1?projectId={project}",
    accepts: "any",
    scope: "write",
  },
  {
    method: "POST",
    path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV/upload/complete?projectId={project}",
    accepts: "any",
    scope: "write",
    body: { parts: [{ partNumber: 1, etag: "x" }] },
  },
  {
    method: "PUT",
    path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV/thumbnail?projectId={project}",
    accepts: "any",
    scope: "write",
  },
  {
    method: "DELETE",
    path: "/v1/videos/01ARZ3NDEKTSV4RRFFQ69G5FAV/thumbnail?projectId={project}",
    accepts: "any",
    scope: "write",
  },
  {
    method: "POST",
    path: "/v1/videos/bulk?projectId={project}",
    accepts: "any",
    scope: "write",
    body: { action: "delete", videoIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"] },
  },
];

async function call(route: ProtectedRoute, projectId: string, init: RequestInit): Promise<Response> {
  const path = route.path.replaceAll("{project}", projectId);
  const headers = { ...(init.headers as Record<string, string>), "content-type": "application/json" };
  const body = route.body === undefined ? undefined : JSON.stringify(route.body);
  return api(path, { method: route.method, ...init, headers, body });
}

describe.each(PROTECTED_ROUTES)("$method $path", (route) => {
  async function setUp(): Promise<{ session: Session; projectId: string }> {
    const session = await newSession();
    return { session, projectId: (await newProject(session)).id };
  }

  it("refuses a request without credentials", async () => {
    const { projectId } = await setUp();
    const response = await call(route, projectId, {});
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("unauthorized");
  });

  it.each([
    ["a forged cookie", { cookie: "svc_session=forged" }],
    ["an unknown key", { authorization: "Bearer svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }],
    ["a key of another prefix", { authorization: "Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAAAA" }],
    ["a non-bearer scheme", { authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty bearer", { authorization: "Bearer " }],
  ])("refuses %s", async (_, headers) => {
    const { projectId } = await setUp();
    const response = await call(route, projectId, { headers });
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("unauthorized");
  });

  it("lets the Authorization header alone decide when both are sent", async () => {
    const { session, projectId } = await setUp();
    const response = await call(route, projectId, withCookie(session, { headers: { authorization: "Bearer nope" } }));
    expect(response.status).toBe(401);
  });

  if (route.accepts === "session") {
    it("refuses an API key", async () => {
      const { session, projectId } = await setUp();
      const key = await newKey(session, projectId, ["read", "write"]);
      const response = await call(route, projectId, bearer(key));
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("unauthorized");
    });
  }

  if (route.scope === "write") {
    it("refuses a read-only key with insufficient_scope", async () => {
      const { session, projectId } = await setUp();
      const key = await newKey(session, projectId, ["read"]);
      const response = await call(route, projectId, bearer(key));
      expect(response.status).toBe(403);
      expect(await errorCode(response)).toBe("insufficient_scope");
    });
  }

  if (route.accepts === "any") {
    it("refuses a key whose project owner is not approved", async () => {
      const { session, projectId } = await setUp();
      const key = await newKey(session, projectId, ["read", "write"]);
      await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
      const response = await call(route, projectId, bearer(key));
      expect(response.status).toBe(403);
      expect(await errorCode(response)).toBe("account_not_approved");
    });
  }

  if (!route.skipsApproval) {
    it("refuses an unapproved account", async () => {
      const { session, projectId } = await setUp();
      await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
      // Suspension ended the session; a new login works, and is refused here.
      const cookie = await logIn(session.email, session.password);
      const response = await call(route, projectId, withCookie({ ...session, cookie }));
      expect(response.status).toBe(403);
      expect(await errorCode(response)).toBe("account_not_approved");
    });
  }
});

/** The operator API: the operator token (ADMIN_TOKEN) only; `{account}` is an account to act on. */
const OPERATOR_ROUTES = [
  { method: "POST", path: "/v1/admin/accounts/{account}/approve" },
  { method: "POST", path: "/v1/admin/accounts/{account}/suspend" },
  { method: "PUT", path: "/v1/admin/accounts/{account}/plan", body: { plan: "pro" } },
];

type Workspace = Awaited<ReturnType<typeof newWorkspace>>;

/** A session and an API key to offer where they are no credential; one for the whole file. */
let someone: Promise<Workspace> | undefined;

describe.each(OPERATOR_ROUTES)("$method $path", (route) => {
  async function callAs(headers: (ws: Workspace) => Record<string, string>) {
    someone ??= newWorkspace();
    const ws = await someone;
    const { account } = await signUp();
    // A client address of its own: failed tokens count per client (operator_failures).
    return api(route.path.replace("{account}", account.id), {
      method: route.method,
      headers: { "content-type": "application/json", "cf-connecting-ip": clientIp(), ...headers(ws) },
      ...(route.body ? { body: JSON.stringify(route.body) } : {}),
    });
  }

  it.each([
    ["no credential", () => ({})],
    ["a wrong token", () => ({ authorization: "Bearer not-the-token" })],
    ["the token under another scheme", () => ({ authorization: ADMIN.authorization.replace("Bearer", "Token") })],
    ["an empty bearer", () => ({ authorization: "Bearer " })],
    ["an API key", (ws: Workspace) => ({ authorization: `Bearer ${ws.key}` })],
    ["a session", (ws: Workspace) => ({ cookie: ws.session.cookie })],
  ])("refuses %s with 401 unauthorized", async (_, headers) => {
    const response = await callAs(headers);
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("unauthorized");
  });

  it("accepts the operator token", async () => {
    expect((await callAs(() => ADMIN)).status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { ROUTES } from "../../src/http/route";
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
 * Every protected route, with what it accepts, read from the route registry (the same configs the
 * OpenAPI document comes from): a new route is in this matrix the moment it exists. `{project}` is
 * replaced by a project of the caller.
 */
type ProtectedRoute = {
  method: string;
  path: string;
  accepts: "session" | "any";
  /** The scope an API key needs, for routes that accept keys. */
  scope?: "read" | "write";
  /** Routes that an unapproved account may still use. */
  skipsApproval?: boolean;
  /** Routes that act in a mode (docs/api-guide.md#test-mode-and-going-live): they read `?mode=`. */
  modes?: boolean;
  body?: unknown;
};

const SOME_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
/** Operations anyone may call: refusing a stranger is not theirs to do. */
const PUBLIC_OPERATIONS = ["signUp", "logIn", "getThumbnail"];

type Security = Record<string, string[]>[];
const codesOf = (config: (typeof ROUTES)[number], status: string): string[] => {
  const content = (config.responses[status] as { content?: Record<string, { schema?: z.ZodType }> } | undefined)
    ?.content?.["application/json"]?.schema;
  const shape = content?.toJSONSchema?.() as {
    properties?: { error?: { properties?: { code?: { enum?: string[] } } } };
  };
  return shape?.properties?.error?.properties?.code?.enum ?? [];
};

const REGISTERED = ROUTES.map((config) => ({ config, security: (config.security ?? []) as Security }));
const PROTECTED_ROUTES: ProtectedRoute[] = REGISTERED.filter(
  ({ security }) => security.length > 0 && !security.some((s) => "operatorToken" in s),
).map(({ config, security }) => {
  const keyScopes = security.find((s) => "apiKey" in s)?.apiKey;
  const byQuery = codesOf(config, "400").includes("invalid_project_id");
  const path = config.path.replace(/\{(?!projectId\})[^}]+\}/g, SOME_ID).replace("{projectId}", "{project}");
  const query = config.request?.query as { shape?: Record<string, unknown> } | undefined;
  const takesJson = Boolean(
    (config.request?.body as { content?: Record<string, unknown> } | undefined)?.content?.["application/json"],
  );
  return {
    method: config.method.toUpperCase(),
    path: byQuery ? `${path}?projectId={project}` : path,
    accepts: keyScopes ? "any" : "session",
    ...(keyScopes ? { scope: keyScopes[0] as "read" | "write" } : {}),
    skipsApproval: !codesOf(config, "403").includes("account_not_approved"),
    modes: Boolean(query?.shape?.mode),
    ...(takesJson ? { body: {} } : {}),
  };
});

describe("the matrix", () => {
  it("holds every registered route but the public ones and the operator API's", () => {
    const unprotected = REGISTERED.filter(({ security }) => security.length === 0).map(
      ({ config }) => config.operationId,
    );
    expect(unprotected.sort()).toEqual([...PUBLIC_OPERATIONS].sort());
    expect(PROTECTED_ROUTES.length).toBeGreaterThanOrEqual(30);
    expect(PROTECTED_ROUTES).toContainEqual(
      expect.objectContaining({ method: "DELETE", path: "/v1/projects/{project}", accepts: "session" }),
    );
    expect(PROTECTED_ROUTES).toContainEqual(
      expect.objectContaining({ method: "POST", path: "/v1/videos/bulk?projectId={project}", scope: "write" }),
    );
    expect(PROTECTED_ROUTES).toContainEqual(
      expect.objectContaining({ method: "GET", path: "/v1/account", skipsApproval: true }),
    );
    // Every operation an API key may call acts in a mode
    // (docs/api-guide.md#test-mode-and-going-live), and none other does.
    expect(PROTECTED_ROUTES.filter((route) => route.modes)).toEqual(
      PROTECTED_ROUTES.filter((route) => route.accepts === "any"),
    );
  });
});

async function call(route: ProtectedRoute, projectId: string, init: RequestInit, query = ""): Promise<Response> {
  const path = `${route.path.replaceAll("{project}", projectId)}${query && (route.path.includes("?") ? "&" : "?")}${query}`;
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

  if (route.modes) {
    it("checks the credential, the approval and the scope before the mode", async () => {
      const { session, projectId } = await setUp();
      expect((await call(route, projectId, {}, "mode=sandbox")).status).toBe(401);
      if (route.scope === "write") {
        const key = await newKey(session, projectId, ["read"]);
        expect(await errorCode(await call(route, projectId, bearer(key), "mode=sandbox"))).toBe("insufficient_scope");
      }
      await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
      const cookie = await logIn(session.email, session.password);
      const refused = await call(route, projectId, withCookie({ ...session, cookie }), "mode=sandbox");
      expect(await errorCode(refused)).toBe("account_not_approved");
    });

    it.each([
      ["a session", "session"],
      ["a live key", "live"],
      ["a test key", "test"],
    ] as const)("refuses %s's mode other than live or test with 400 invalid_query", async (_, credential) => {
      const { session, projectId } = await setUp();
      const init =
        credential === "session"
          ? withCookie(session)
          : bearer(await newKey(session, projectId, ["read", "write"], credential));
      for (const query of ["mode=sandbox", "mode=", "mode=live&mode=test"]) {
        const response = await call(route, projectId, init, query);
        expect(response.status, query).toBe(400);
        expect(await errorCode(response)).toBe("invalid_query");
      }
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
const OPERATOR_BODIES: Record<string, unknown> = { planAccount: { plan: "pro" } };
const OPERATOR_ROUTES = REGISTERED.filter(({ security }) => security.some((s) => "operatorToken" in s)).map(
  ({ config }) => ({
    method: config.method.toUpperCase(),
    path: config.path.replace("{accountId}", "{account}"),
    body: OPERATOR_BODIES[config.operationId ?? ""],
  }),
);

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

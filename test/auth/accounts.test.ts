import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, api, approve, clientIp, errorCode, json, logIn, newSession, signUp, withCookie } from "../helpers";
import { apiWith } from "../support/app";

describe("signup", () => {
  it("creates an unapproved account on a 14-day trial", async () => {
    const response = await api(
      "/v1/auth/signup",
      json("POST", { email: "  Ada@Example.com ", password: "0123456789" }, { "cf-connecting-ip": clientIp() }),
    );
    expect(response.status).toBe(201);
    const account = (await response.json()) as Record<string, unknown>;
    expect(account).toMatchObject({ email: "Ada@Example.com", approved: false, plan: "trial" });
    expect(account.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const trialDays = (Date.parse(String(account.trialEndsAt)) - Date.parse(String(account.createdAt))) / 86_400_000;
    expect(trialDays).toBe(14);
    expect(String(account.createdAt)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(account).not.toHaveProperty("password_hash");
  });

  it("refuses a taken email, compared case-insensitively", async () => {
    await signUp("taken@example.com");
    const response = await api(
      "/v1/auth/signup",
      json("POST", { email: "TAKEN@example.com ", password: "0123456789" }, { "cf-connecting-ip": clientIp() }),
    );
    expect(response.status).toBe(409);
    expect(await errorCode(response)).toBe("email_taken");
  });

  it.each([
    ["a bad email", { email: "not-an-email", password: "0123456789" }],
    ["a short password", { email: "a@example.com", password: "012345678" }],
    ["a long password", { email: "a@example.com", password: "x".repeat(257) }],
    ["a missing password", { email: "a@example.com" }],
    ["an unknown field", { email: "a@example.com", password: "0123456789", admin: true }],
    ["a number for an email", { email: 5, password: "0123456789" }],
    ["an array body", [1, 2]],
    ["unparseable JSON", "{nope"],
  ])("refuses %s with invalid_body", async (_, body) => {
    const response = await api("/v1/auth/signup", json("POST", body, { "cf-connecting-ip": clientIp() }));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("refuses a non-JSON content type with invalid_body", async () => {
    const response = await api("/v1/auth/signup", {
      method: "POST",
      headers: { "content-type": "text/plain", "cf-connecting-ip": clientIp() },
      body: JSON.stringify({ email: "b@example.com", password: "0123456789" }),
    });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("accepts a password of exactly 10 and of exactly 256 characters", async () => {
    for (const password of ["x".repeat(10), "x".repeat(256)]) {
      const response = await api(
        "/v1/auth/signup",
        json("POST", { email: `len${password.length}@example.com`, password }, { "cf-connecting-ip": clientIp() }),
      );
      expect(response.status).toBe(201);
    }
  });

  it("stores only a salted PBKDF2 hash of the password", async () => {
    const { account, password } = await signUp();
    const row = await env.DB.prepare("SELECT password_hash FROM accounts WHERE id = ?")
      .bind(account.id)
      .first<{ password_hash: string }>();
    expect(row?.password_hash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(row?.password_hash).not.toContain(password);
  });
});

describe("login and logout", () => {
  it("sets a strict, secure, 7-day session cookie", async () => {
    const { email, password } = await signUp();
    const response = await api(
      "/v1/auth/login",
      json("POST", { email: email.toUpperCase(), password }, { "cf-connecting-ip": clientIp() }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ email, approved: false });
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^svc_session=[^;]+;/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("Secure");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).toContain("Max-Age=604800");
  });

  it("answers a wrong email and a wrong password alike", async () => {
    const { email } = await signUp();
    const wrongPassword = await api(
      "/v1/auth/login",
      json("POST", { email, password: "wrong password" }, { "cf-connecting-ip": clientIp() }),
    );
    const wrongEmail = await api(
      "/v1/auth/login",
      json("POST", { email: "nobody@example.com", password: "wrong password" }, { "cf-connecting-ip": clientIp() }),
    );
    expect(wrongPassword.status).toBe(401);
    expect(wrongEmail.status).toBe(401);
    const [a, b] = [
      (await wrongPassword.json()) as { error: Record<string, unknown> },
      (await wrongEmail.json()) as { error: Record<string, unknown> },
    ];
    expect(a.error.code).toBe("invalid_credentials");
    expect(a.error.message).toBe(b.error.message);
  });

  it("answers any wrong password invalid_credentials, however short", async () => {
    const { email } = await signUp();
    const response = await api(
      "/v1/auth/login",
      json("POST", { email, password: "x" }, { "cf-connecting-ip": clientIp() }),
    );
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("invalid_credentials");
    const malformed = await api("/v1/auth/login", json("POST", { email }, { "cf-connecting-ip": clientIp() }));
    expect(await errorCode(malformed)).toBe("invalid_body");
  });

  it("stores the session token only as a hash", async () => {
    const session = await newSession();
    const token = session.cookie.split("=")[1] ?? "";
    const rows = await env.DB.prepare("SELECT token_hash FROM sessions WHERE account_id = ?")
      .bind(session.accountId)
      .all<{ token_hash: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.results[0]?.token_hash).not.toBe(token);
  });

  it("logout ends the session and clears the cookie", async () => {
    const session = await newSession();
    const response = await api("/v1/auth/logout", withCookie(session, { method: "POST" }));
    expect(response.status).toBe(204);
    expect(response.headers.get("set-cookie")).toMatch(/^svc_session=;.*Max-Age=0/);
    const after = await api("/v1/account", withCookie(session));
    expect(after.status).toBe(401);
    expect(await errorCode(after)).toBe("unauthorized");
  });

  it("an expired session is refused", async () => {
    const session = await newSession();
    await env.DB.prepare("UPDATE sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE account_id = ?")
      .bind(session.accountId)
      .run();
    expect((await api("/v1/account", withCookie(session))).status).toBe(401);
  });
});

describe("account", () => {
  it("is readable before approval", async () => {
    const session = await newSession({ approved: false });
    const response = await api("/v1/account", withCookie(session));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: session.accountId, approved: false, plan: "trial" });
  });

  it("needs a session", async () => {
    const response = await api("/v1/account");
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("unauthorized");
    expect((await api("/v1/account", { headers: { cookie: "svc_session=forged" } })).status).toBe(401);
  });

  it("shows the operator's plan once the trial has ended, else free", async () => {
    const session = await newSession();
    await env.DB.prepare("UPDATE accounts SET trial_ends_at = '2020-01-01T00:00:00.000Z' WHERE id = ?")
      .bind(session.accountId)
      .run();
    expect(await (await api("/v1/account", withCookie(session))).json()).toMatchObject({ plan: "free" });
    const set = await api(`/v1/admin/accounts/${session.accountId}/plan`, json("PUT", { plan: "pro" }, ADMIN));
    expect(set.status).toBe(200);
    expect(await (await api("/v1/account", withCookie(session))).json()).toMatchObject({ plan: "pro" });
  });

  it("keeps the trial plan while the trial runs, whatever the operator set", async () => {
    const session = await newSession();
    await api(`/v1/admin/accounts/${session.accountId}/plan`, json("PUT", { plan: "business" }, ADMIN));
    expect(await (await api("/v1/account", withCookie(session))).json()).toMatchObject({ plan: "trial" });
  });
});

describe("operator API", () => {
  it("approves and suspends accounts", async () => {
    const { account, email, password } = await signUp();
    const approved = await api(`/v1/admin/accounts/${account.id}/approve`, { method: "POST", headers: ADMIN });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ id: account.id, approved: true });
    const cookie = await logIn(email, password);
    expect((await api("/v1/projects", { headers: { cookie } })).status).toBe(200);
    const suspended = await api(`/v1/admin/accounts/${account.id.toLowerCase()}/suspend`, {
      method: "POST",
      headers: ADMIN,
    });
    expect(await suspended.json()).toMatchObject({ approved: false });
    // Suspension ends every session: the old cookie is gone, even after approval again.
    const ended = await api("/v1/projects", { headers: { cookie } });
    expect(ended.status).toBe(401);
    const fresh = await logIn(email, password);
    const refused = await api("/v1/projects", { headers: { cookie: fresh } });
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("account_not_approved");
    await api(`/v1/admin/accounts/${account.id}/approve`, { method: "POST", headers: ADMIN });
    expect((await api("/v1/projects", { headers: { cookie } })).status).toBe(401);
    expect((await api("/v1/projects", { headers: { cookie: fresh } })).status).toBe(200);
  });

  it("answers 404 not_found when ADMIN_TOKEN is unset", async () => {
    const { account } = await signUp();
    const response = await apiWith({ ADMIN_TOKEN: "" }, `/v1/admin/accounts/${account.id}/approve`, {
      method: "POST",
      headers: { authorization: "Bearer " },
    });
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("not_found");
  });

  it("refuses a wrong token and unknown accounts", async () => {
    const { account } = await signUp();
    const wrong = await api(`/v1/admin/accounts/${account.id}/approve`, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);
    expect(await errorCode(wrong)).toBe("unauthorized");
    expect((await api(`/v1/admin/accounts/${account.id}/approve`, { method: "POST" })).status).toBe(401);
    const unknown = await api("/v1/admin/accounts/01ARZ3NDEKTSV4RRFFQ69G5FAV/approve", {
      method: "POST",
      headers: ADMIN,
    });
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("not_found");
    expect((await api("/v1/admin/accounts/not-a-ulid/approve", { method: "POST", headers: ADMIN })).status).toBe(404);
  });

  it.each([{ plan: "gold" }, { plan: "pro", extra: 1 }, {}, "nope"])(
    "refuses plan body %j with invalid_body",
    async (body) => {
      await approve((await signUp()).account.id);
      const { account } = await signUp();
      const response = await api(`/v1/admin/accounts/${account.id}/plan`, json("PUT", body, ADMIN));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_body");
    },
  );
});

describe("GET /v1/admin/accounts", () => {
  type Page = { data: { id: string; approved: boolean }[]; nextCursor: string | null };
  const list = async (query: string) => api(`/v1/admin/accounts?${query}`, { headers: ADMIN });

  it("lists accounts newest first, and approved=false finds those waiting for approval", async () => {
    const waiting = (await signUp()).account.id;
    const approved = (await signUp()).account.id;
    await approve(approved);
    const newest = (await signUp()).account.id;
    const all = (await (await list("limit=100")).json()) as Page;
    const ids = all.data.map((a) => a.id);
    expect(ids.indexOf(newest)).toBeLessThan(ids.indexOf(approved));
    expect(ids.indexOf(approved)).toBeLessThan(ids.indexOf(waiting));
    const pending = (await (await list("approved=false&limit=100")).json()) as Page;
    expect(pending.data.every((a) => !a.approved)).toBe(true);
    expect(pending.data.map((a) => a.id)).toEqual(expect.arrayContaining([waiting, newest]));
    expect(pending.data.map((a) => a.id)).not.toContain(approved);
    const done = (await (await list("approved=true&limit=100")).json()) as Page;
    expect(done.data.every((a) => a.approved)).toBe(true);
    expect(done.data.map((a) => a.id)).toContain(approved);
    expect(all.data[0]).not.toHaveProperty("password_hash");
  });

  it("pages with cursors bound to the filter", async () => {
    for (let i = 0; i < 3; i++) await signUp();
    const first = (await (await list("approved=false&limit=2")).json()) as Page;
    expect(first.data).toHaveLength(2);
    const cursor = encodeURIComponent(first.nextCursor ?? "");
    const second = (await (await list(`approved=false&limit=2&cursor=${cursor}`)).json()) as Page;
    expect(second.data.map((a) => a.id)).not.toContain(first.data[0]?.id);
    expect(await errorCode(await list(`approved=true&cursor=${cursor}`))).toBe("invalid_cursor");
  });

  it.each([
    ["approved=yes", "invalid_query"],
    ["approved=1", "invalid_query"],
    ["limit=0", "invalid_limit"],
    ["cursor=forged", "invalid_cursor"],
  ])("refuses %s with %s", async (query, code) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe(code);
  });

  it("takes the operator token only", async () => {
    const session = await newSession();
    const response = await api(
      "/v1/admin/accounts",
      withCookie(session, { headers: { "cf-connecting-ip": clientIp() } }),
    );
    expect(response.status).toBe(401);
  });
});

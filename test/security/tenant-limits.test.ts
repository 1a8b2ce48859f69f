import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientPlan, clientSubject, loginFailurePlan, type Plan } from "../../src/rate-limit/middleware";
import { POLICIES, type PolicyName, QUOTAS } from "../../src/rate-limit/policies";
import {
  ADMIN,
  api,
  approve,
  bearer,
  clientIp,
  errorCode,
  json,
  newKey,
  newSession,
  newWorkspace,
  signUp,
  withCookie,
} from "../helpers";
import { apiWith } from "../support/app";

async function inBatches<T>(count: number, size: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, j) => task(start + j)))));
  }
  return out;
}

describe("API key quota", () => {
  it(`holds at most ${QUOTAS.api_keys.limit} unrevoked keys per project, exactly under concurrency`, async () => {
    const { session, project } = await newWorkspace(); // one key already
    const path = `/v1/projects/${project.id}/api-keys`;
    const create = () => api(path, withCookie(session, json("POST", { name: "k", scopes: ["read"], mode: "test" })));
    const statuses = await inBatches(QUOTAS.api_keys.limit + 4, 26, async () => (await create()).status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(QUOTAS.api_keys.limit - 1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    const over = await create();
    expect(await errorCode(over)).toBe("quota_exceeded");
    const count = () =>
      env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE project_id = ?").bind(project.id).first<number>("n");
    expect(await count()).toBe(QUOTAS.api_keys.limit);
    // A revoked key frees its place.
    const { data } = (await (await api(path, withCookie(session))).json()) as { data: { id: string }[] };
    await api(`${path}/${data[0]?.id}`, withCookie(session, { method: "DELETE" }));
    expect((await create()).status).toBe(201);
  });
});

/** One cheap rate-limited call (bulk set_visibility of an unknown id) with `key`. */
function bulk(key: string) {
  return api(
    "/v1/videos/bulk",
    bearer(
      key,
      json("POST", { action: "set_visibility", videoIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"], visibility: "public" }),
    ),
  );
}

describe("per-project buckets", () => {
  it("let many keys of one project share one ceiling: 10x the caller's limit", async () => {
    const { session, project } = await newWorkspace();
    const keys = await inBatches(11, 11, () => newKey(session, project.id));
    // Ten keys use their whole own budget: 300 requests, the project's ceiling.
    const first = await inBatches(300, 50, (i) => bulk(keys[Math.floor(i / 30)] as string));
    expect(first.every((r) => r.status === 200)).toBe(true);
    expect(first[0]?.headers.get("ratelimit-policy")).toBe('"bulk";q=30;w=60');
    // The eleventh key has its own 30, but the project has nothing left.
    const refused = await bulk(keys[10] as string);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-policy")).toBe('"bulk_per_project";q=300;w=60');
    expect(refused.headers.get("ratelimit")).toMatch(/^"bulk_per_project";r=0;t=\d+$/);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await errorCode(refused)).toBe("rate_limited");
    // Another project is untouched.
    const other = await newWorkspace();
    expect((await bulk(other.key)).status).toBe(200);
  });

  it("name the tighter bucket in the headers", async () => {
    const { session, project } = await newWorkspace();
    const keys = await inBatches(10, 10, () => newKey(session, project.id));
    // 9 keys × 30 = 270 of the project's 300; a fresh key then has 30 left, the project 30 too.
    await inBatches(270, 50, (i) => bulk(keys[Math.floor(i / 30)] as string));
    const fresh = keys[9] as string;
    const tie = await bulk(fresh);
    expect(tie.headers.get("ratelimit")).toBe('"bulk";r=29;t=60');
    await bulk(keys[0] as string); // refused for key 0 itself, and not counted for the project
    await bulk(fresh);
    const after = await bulk(fresh);
    expect(after.headers.get("ratelimit")).toMatch(/^"bulk";r=27;t=(59|60)$/);
  });

  it("let many sessions of one account share one project-create ceiling", async () => {
    const { account, email, password } = await signUp();
    await approve(account.id);
    const login = async () => {
      const response = await api(
        "/v1/auth/login",
        json("POST", { email, password }, { "cf-connecting-ip": clientIp() }),
      );
      return response.headers.get("set-cookie")?.split(";")[0] ?? "";
    };
    // Each login is a fresh per-session bucket of 60, but the account holds 600 in all.
    const cookies = await inBatches(11, 1, login);
    const create = (cookie: string) =>
      api("/v1/projects", { ...json("POST", { name: "x" }), headers: { "content-type": "application/json", cookie } });
    const statuses = await inBatches(
      600,
      50,
      async (i) => (await create(cookies[Math.floor(i / 60)] as string)).status,
    );
    expect(statuses.every((s) => s === 201)).toBe(true);
    const refused = await create(cookies[10] as string);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-policy")).toBe('"project_create_per_account";q=600;w=60');
  });
});

/** The limiter object a plan's buckets live in. */
function limiterOf(plan: Plan) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(plan.object));
}

/**
 * Counts `times` requests against `policy`'s buckets as the Worker would, `ago` ms in the past:
 * the limiter takes the time as an argument, so a test can place hits anywhere in the window.
 */
async function countPast(policy: PolicyName, plan: Plan, times: number, ago = 0): Promise<void> {
  const input = {
    policy,
    windowSeconds: POLICIES[policy].windowSeconds,
    buckets: plan.buckets.map(({ subject, limit }) => ({ subject, limit })),
  };
  for (let i = 0; i < times; i++) expect((await limiterOf(plan).consume(input, Date.now() - ago)).allowed).toBe(true);
}

const LOGIN_FAILURES_MESSAGE = "Too many failed logins for this email from this address; retry later.";

describe("login guessing", () => {
  async function login(email: string, password: string, ip = clientIp()) {
    return api("/v1/auth/login", json("POST", { email, password }, { "cf-connecting-ip": ip }));
  }

  /** `times` failed logins of client `ip` for `email`, `ago` ms in the past. */
  async function failedLogins(ip: string, email: string, times: number, ago = 0) {
    await countPast("login_failures", await loginFailurePlan(ip, email), times, ago);
  }

  it("never locks the owner out: after failures from other clients the right password still logs in", async () => {
    const session = await newSession();
    // Ten clients, one wrong password each: the whole budget the old per-email limit had.
    for (let i = 0; i < 10; i++) expect((await login(session.email, "wrong password!")).status).toBe(401);
    const owner = await login(session.email, session.password);
    expect(owner.status).toBe(200);
    expect(owner.headers.get("set-cookie")).toMatch(/^svc_session=[^;]+;/);
  });

  it("refuses a client's next attempt after its 10 failures, right password too; other clients log in", async () => {
    const session = await newSession();
    const ip = clientIp();
    const failures = await Promise.all(Array.from({ length: 10 }, () => login(session.email, "wrong password!", ip)));
    expect(failures.map((r) => r.status)).toEqual(Array(10).fill(401));
    const refused = await login(session.email, session.password, ip);
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Ten attempts a minute is also the per-address limit, which is asked first and answers here.
    expect(refused.headers.get("ratelimit-policy")).toBe('"login";q=10;w=60');
    expect(refused.headers.get("ratelimit")).toMatch(/^"login";r=0;t=\d+$/);
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it("counts failures per client and email: the same client's other emails are not blocked by it", async () => {
    const session = await newSession();
    const other = await newSession();
    const ip = clientIp();
    // Filled directly, so that the per-address limit (which also allows 10 a minute) has room.
    await failedLogins(ip, session.email, 10);
    const refused = await login(session.email.toUpperCase(), session.password, ip);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^(59|60)$/);
    expect(refused.headers.get("ratelimit-policy")).toBe('"login_failures";q=10;w=60');
    expect(refused.headers.get("ratelimit")).toMatch(/^"login_failures";r=0;t=(59|60)$/);
    const body = (await refused.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error).toEqual({
      code: "rate_limited",
      message: LOGIN_FAILURES_MESSAGE,
      requestId: refused.headers.get("x-request-id"),
    });
    // The same client with another email, and another client with this one: both log in.
    expect((await login(other.email, other.password, ip)).status).toBe(200);
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it("answers a known and an unknown email alike", async () => {
    const session = await newSession();
    const answers = [];
    for (const email of [session.email, "nobody-here@example.com"]) {
      const ip = clientIp();
      await failedLogins(ip, email, 9);
      const last = await login(email, "wrong password!", ip);
      const refused = await login(email, "wrong password!", ip);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      answers.push({
        last: last.status,
        refused: refused.status,
        code: body.error.code,
        message: body.error.message,
        policy: refused.headers.get("ratelimit-policy"),
      });
    }
    expect(answers[0]).toEqual({
      last: 401,
      refused: 429,
      code: "rate_limited",
      message: LOGIN_FAILURES_MESSAGE,
      policy: '"login_failures";q=10;w=60',
    });
    expect(answers[1]).toEqual(answers[0]);
  });

  it("lets concurrent guesses from one client pass the limit no further together", async () => {
    const session = await newSession();
    const ip = clientIp();
    await failedLogins(ip, session.email, 7);
    const guesses = await Promise.all(Array.from({ length: 5 }, () => login(session.email, "wrong password!", ip)));
    expect(guesses.filter((r) => r.status === 401)).toHaveLength(3);
    const refused = guesses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(2);
    expect(refused.map((r) => r.headers.get("ratelimit-policy"))).toEqual(Array(2).fill('"login_failures";q=10;w=60'));
  });

  it("gives a successful login's slot back", async () => {
    const session = await newSession();
    const ip = clientIp();
    await failedLogins(ip, session.email, 9);
    for (let i = 0; i < 3; i++) expect((await login(session.email, session.password, ip)).status).toBe(200);
    expect((await login(session.email, "wrong password!", ip)).status).toBe(401);
    expect((await login(session.email, session.password, ip)).status).toBe(429);
  });

  it("forgets failures once they are 60 s old", async () => {
    const session = await newSession();
    const ip = clientIp();
    await failedLogins(ip, session.email, 10, 60_000);
    expect((await login(session.email, session.password, ip)).status).toBe(200);
    // Ten failures 50 s ago: refused for the 10 s left of the window.
    const recent = clientIp();
    await failedLogins(recent, session.email, 10, 50_000);
    const refused = await login(session.email, session.password, recent);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(10);
    expect(refused.headers.get("ratelimit")).toMatch(/^"login_failures";r=0;t=([1-9]|10)$/);
  });

  it("counts IPv6 clients per /64", async () => {
    expect(clientSubject("2001:db8:1:2:aaaa::1")).toBe(clientSubject("2001:DB8:1:2:ffff:ffff:ffff:ffff"));
    expect(clientSubject("2001:db8:1:2::1")).not.toBe(clientSubject("2001:db8:1:3::1"));
    expect(clientSubject("::1")).toBe("ip6:0:0:0:0::/64");
    expect(clientSubject("203.0.113.9")).toBe("ip:203.0.113.9");
    const prefix = `2001:db8:${Math.floor(Math.random() * 65535).toString(16)}:7`;
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        login(`v6-${i}@example.com`, "wrong password!", `${prefix}:${(i + 1).toString(16)}::1`).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    // Failed logins too: another address of the same /64 is the same client.
    const session = await newSession();
    const home = `2001:db8:${Math.floor(Math.random() * 65535).toString(16)}:9`;
    await failedLogins(`${home}::1`, session.email, 10);
    expect((await login(session.email, session.password, `${home}:ffff::2`)).status).toBe(429);
    expect((await login(session.email, session.password, `${home.replace(/:9$/, ":a")}::1`)).status).toBe(200);
  });
});

describe("operator token guessing", () => {
  /** Approves `accountId` from client `ip` with `headers` (the operator token or anything else). */
  function approveAs(accountId: string, ip: string, headers: Record<string, string> = {}) {
    return api(`/v1/admin/accounts/${accountId}/approve`, {
      method: "POST",
      headers: { "cf-connecting-ip": ip, ...headers },
    });
  }

  const POLICY = '"operator_failures";q=10;w=60';

  it("answers 429 to a client's 11th missing or wrong token within 60 s; other clients are untouched", async () => {
    const { account } = await signUp();
    const { session, key } = await newWorkspace();
    const ip = clientIp();
    // Neither a session nor an API key is an operator token.
    const wrong: Record<string, string>[] = [
      {},
      { authorization: "Bearer nope" },
      { authorization: `${ADMIN.authorization}x` },
      { authorization: `Basic ${btoa("operator:test-admin-token")}` },
      { authorization: "Bearer " },
      { authorization: `Bearer ${key}` },
      { cookie: session.cookie },
    ];
    for (let i = 0; i < 10; i++) {
      const response = await approveAs(account.id, ip, wrong[i % wrong.length]);
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("unauthorized");
      expect(response.headers.get("ratelimit-policy")).toBe(POLICY);
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"operator_failures";r=${9 - i};t=(59|60)$`));
    }
    const refused = await approveAs(account.id, ip, { authorization: "Bearer nope" });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error).toEqual({
      code: "rate_limited",
      message: "Too many missing or wrong operator tokens from this address; retry later.",
      requestId: refused.headers.get("x-request-id"),
    });
    expect(refused.headers.get("retry-after")).toMatch(/^(59|60)$/);
    expect(refused.headers.get("ratelimit-policy")).toBe(POLICY);
    expect(refused.headers.get("ratelimit")).toMatch(/^"operator_failures";r=0;t=(59|60)$/);
    // A brute-force guard: while blocked, the client's guesses are not checked, a right one included.
    const right = await approveAs(account.id, ip, ADMIN);
    expect(right.status).toBe(429);
    expect(await errorCode(right)).toBe("rate_limited");
    // Another client: 401 for a wrong token, 200 for the right one.
    const other = clientIp();
    expect((await approveAs(account.id, other, { authorization: "Bearer nope" })).status).toBe(401);
    const approved = await approveAs(account.id, other, ADMIN);
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ id: account.id, approved: true });
  });

  it("never counts a right token, however many arrive at once", async () => {
    const { account } = await signUp();
    const ip = clientIp();
    const rights = await Promise.all(Array.from({ length: 25 }, () => approveAs(account.id, ip, ADMIN)));
    expect(rights.map((r) => r.status)).toEqual(Array(25).fill(200));
    expect(rights[0]?.headers.get("ratelimit")).toBeNull();
    for (let i = 0; i < 10; i++) expect((await approveAs(account.id, ip)).status).toBe(401);
    expect((await approveAs(account.id, ip)).status).toBe(429);
  });

  it("counts concurrent wrong tokens exactly", async () => {
    const { account } = await signUp();
    const ip = clientIp();
    const guesses = await Promise.all(
      Array.from({ length: 15 }, (_, i) => approveAs(account.id, ip, { authorization: `Bearer guess-${i}` })),
    );
    expect(guesses.filter((r) => r.status === 401)).toHaveLength(10);
    expect(guesses.filter((r) => r.status === 429)).toHaveLength(5);
  });

  it("forgets failures once they are 60 s old", async () => {
    const { account } = await signUp();
    const ip = clientIp();
    await countPast("operator_failures", clientPlan("operator_failures", ip), 10, 60_000);
    expect((await approveAs(account.id, ip, ADMIN)).status).toBe(200);
    const wrong = await approveAs(account.id, ip, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("ratelimit")).toMatch(/^"operator_failures";r=9;t=(59|60)$/);
    // Ten failures 45 s ago: refused for the 15 s left of the window.
    const recent = clientIp();
    await countPast("operator_failures", clientPlan("operator_failures", recent), 10, 45_000);
    const refused = await approveAs(account.id, recent, ADMIN);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(15);
  });

  it("counts nothing while ADMIN_TOKEN is unset (the operator API answers 404)", async () => {
    const { account } = await signUp();
    const ip = clientIp();
    for (let i = 0; i < 12; i++) {
      const response = await apiWith({ ADMIN_TOKEN: "" }, `/v1/admin/accounts/${account.id}/approve`, {
        method: "POST",
        headers: { "cf-connecting-ip": ip, authorization: "Bearer nope" },
      });
      expect(response.status).toBe(404);
      expect(response.headers.get("ratelimit")).toBeNull();
    }
    const wrong = await approveAs(account.id, ip, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("ratelimit")).toMatch(/^"operator_failures";r=9;t=(59|60)$/);
  });
});

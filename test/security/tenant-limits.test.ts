import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientSubject } from "../../src/rate-limit/middleware";
import { QUOTAS } from "../../src/rate-limit/policies";
import {
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

describe("login guessing", () => {
  async function login(email: string, password: string, ip = clientIp()) {
    return api("/v1/auth/login", json("POST", { email, password }, { "cf-connecting-ip": ip }));
  }

  it("allows at most 10 failed logins per email in 15 minutes, from any address, known or not", async () => {
    const session = await newSession();
    for (const email of [session.email, "nobody-here@example.com"]) {
      const attempts = await Promise.all(Array.from({ length: 12 }, () => login(email, "wrong password!")));
      expect(attempts.filter((r) => r.status === 401)).toHaveLength(10);
      const limited = attempts.filter((r) => r.status === 429);
      expect(limited).toHaveLength(2);
      const body = (await limited[0]?.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({
        code: "rate_limited",
        message: "Too many failed logins for this email; retry later.",
      });
      expect(limited[0]?.headers.get("ratelimit-policy")).toBe('"login_failures";q=10;w=900');
    }
    // Even the right password waits now: the email is locked, whoever asks.
    expect((await login(session.email.toUpperCase(), session.password)).status).toBe(429);
  });

  it("does not count a successful login as a failure", async () => {
    const session = await newSession();
    for (let i = 0; i < 12; i++) expect((await login(session.email, session.password)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await login(session.email, "wrong password!")).status).toBe(401);
    expect((await login(session.email, "wrong password!")).status).toBe(429);
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
  });
});

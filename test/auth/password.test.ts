import { describe, expect, it } from "vitest";
import {
  api,
  bearer,
  clientIp,
  errorCode,
  json,
  logIn,
  newSession,
  newWorkspace,
  ORIGIN,
  type Session,
  withCookie,
} from "../helpers";

const PATH = "/v1/account/password";
const NEW_PASSWORD = "a brand new passphrase";

function change(session: Session, body: unknown, headers: Record<string, string> = {}) {
  return api(PATH, withCookie(session, json("POST", body, { "cf-connecting-ip": clientIp(), ...headers })));
}

function login(email: string, password: string, ip = clientIp()) {
  return api("/v1/auth/login", json("POST", { email, password }, { "cf-connecting-ip": ip }));
}

const accountStatus = async (cookie: string) => (await api("/v1/account", { headers: { cookie } })).status;

describe("POST /v1/account/password", () => {
  it("replaces the password and ends every other session of the account, keeping the one that asked", async () => {
    const session = await newSession();
    const other = await logIn(session.email, session.password);
    const response = await change(session, { currentPassword: session.password, newPassword: NEW_PASSWORD });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(await accountStatus(session.cookie)).toBe(200);
    expect(await accountStatus(other)).toBe(401);
    expect(await errorCode(await login(session.email, session.password))).toBe("invalid_credentials");
    expect((await login(session.email, NEW_PASSWORD)).status).toBe(200);
  });

  it("leaves API keys alone: they are no sessions", async () => {
    const { session, key } = await newWorkspace();
    expect((await change(session, { currentPassword: session.password, newPassword: NEW_PASSWORD })).status).toBe(204);
    expect((await api("/v1/videos", bearer(key))).status).toBe(200);
  });

  it("refuses a wrong current password with invalid_credentials on currentPassword, changing nothing", async () => {
    const session = await newSession();
    const other = await logIn(session.email, session.password);
    const response = await change(session, { currentPassword: "not the password", newPassword: NEW_PASSWORD });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("invalid_credentials");
    expect(body.error.details.map((detail) => detail.path)).toEqual(["currentPassword"]);
    expect(await accountStatus(session.cookie)).toBe(200);
    expect(await accountStatus(other)).toBe(200);
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it("counts a wrong current password as a failed login of that client (login_failures)", async () => {
    const session = await newSession();
    const ip = clientIp();
    const wrong = { currentPassword: "not the password", newPassword: NEW_PASSWORD };
    for (let i = 0; i < 10; i++) {
      expect((await change(session, wrong, { "cf-connecting-ip": ip })).status).toBe(401);
    }
    // That client may neither guess again here nor log in to the email; any other client may.
    const right = { currentPassword: session.password, newPassword: NEW_PASSWORD };
    const refused = await change(session, right, { "cf-connecting-ip": ip });
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    expect(refused.headers.get("ratelimit-policy")).toBe('"login_failures";q=10;w=60');
    const blockedLogin = await login(session.email, session.password, ip);
    expect(blockedLogin.status).toBe(429);
    expect(blockedLogin.headers.get("ratelimit-policy")).toBe('"login_failures";q=10;w=60');
    expect((await login(session.email, session.password)).status).toBe(200);
    expect((await change(session, right)).status).toBe(204);
  });

  it("gives a right current password's failure slot back", async () => {
    const session = await newSession();
    const ip = clientIp();
    let password = session.password;
    for (let i = 0; i < 11; i++) {
      const next = `${NEW_PASSWORD} ${i}`;
      const response = await change(
        session,
        { currentPassword: password, newPassword: next },
        { "cf-connecting-ip": ip },
      );
      expect(response.status).toBe(204);
      password = next;
    }
  });

  it.each([
    ["a new password under 10 characters", { newPassword: "012345678" }],
    ["a new password over 256 characters", { newPassword: "x".repeat(257) }],
    ["a new password with a control character", { newPassword: "new\u0000password!" }],
    ["a new password that is no string", { newPassword: 1234567890 }],
    ["no new password", { newPassword: undefined }],
    ["no current password", { currentPassword: undefined }],
    ["an unknown field", { also: "x" }],
  ])("refuses %s with invalid_body, changing nothing", async (_, fields) => {
    const session = await newSession();
    const body = { currentPassword: session.password, newPassword: NEW_PASSWORD, ...fields };
    const response = await change(session, body);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
    expect((await login(session.email, session.password)).status).toBe(200);
  });

  it("takes the session cookie only, from this service's pages or an allowed origin", async () => {
    const { session, key } = await newWorkspace();
    const body = { currentPassword: session.password, newPassword: NEW_PASSWORD };
    const withKey = await api(PATH, bearer(key, json("POST", body)));
    expect(withKey.status).toBe(401);
    expect(await errorCode(withKey)).toBe("unauthorized");
    expect(await errorCode(await api(PATH, json("POST", body)))).toBe("unauthorized");
    const foreign = await change(session, body, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(await errorCode(foreign)).toBe("forbidden_origin");
    expect((await login(session.email, session.password)).status).toBe(200);
    expect((await change(session, body, { origin: ORIGIN })).status).toBe(204);
  });

  it("needs an approved account", async () => {
    const session = await newSession({ approved: false });
    const response = await change(session, { currentPassword: session.password, newPassword: NEW_PASSWORD });
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("account_not_approved");
  });
});

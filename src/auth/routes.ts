import { deleteCookie, setCookie } from "hono/cookie";
import { jsonBody } from "../http/body";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { limitLoginFailures, rateLimit } from "../rate-limit/middleware";
import { toAccount, trialEnd } from "./account";
import { findAccountByEmail, findPasswordHash, insertAccount, replacePassword } from "./account-queries";
import { anySession, approvedSession } from "./guards";
import { sessionOf } from "./middleware";
import { hashPassword, verifyPassword } from "./passwords";
import { AccountSchema, CredentialsSchema, LoginSchema, PasswordChangeSchema } from "./schemas";
import { createSession, deleteSession, SESSION_COOKIE, SESSION_LIFETIME_SECONDS } from "./session-queries";

const signup = route(
  {
    method: "post",
    path: "/v1/auth/signup",
    operationId: "signUp",
    tags: ["Accounts"],
    summary: "Create an account (not approved until an operator approves it)",
    middleware: [rateLimit("signup"), jsonBody] as const,
    request: { body: jsonRequest(CredentialsSchema) },
    responses: {
      201: jsonResponse(AccountSchema, "The new account"),
    },
  },
  ["email_taken"],
);

const login = route(
  {
    method: "post",
    path: "/v1/auth/login",
    operationId: "logIn",
    tags: ["Accounts"],
    summary: "Log in; sets the svc_session cookie",
    description:
      "At most 10 attempts a minute per client address (`login`), and 10 failed ones a minute per client " +
      "address and email (`login_failures`): failures from other addresses never lock the owner out. The " +
      "answer is the same for a known and an unknown email.",
    middleware: [rateLimit("login"), jsonBody] as const,
    request: { body: jsonRequest(LoginSchema) },
    responses: {
      200: jsonResponse(AccountSchema, "The account; the session cookie is set"),
    },
  },
  ["invalid_credentials"],
);

const logout = route({
  method: "post",
  path: "/v1/auth/logout",
  operationId: "logOut",
  tags: ["Accounts"],
  summary: "End the session and clear the cookie",
  middleware: [anySession] as const,
  responses: {
    204: { description: "Logged out" },
  },
});

const account = route({
  method: "get",
  path: "/v1/account",
  operationId: "getAccount",
  tags: ["Accounts"],
  summary: "The logged-in account",
  middleware: [anySession] as const,
  responses: {
    200: jsonResponse(AccountSchema, "The account"),
  },
});

const changePassword = route(
  {
    method: "post",
    path: "/v1/account/password",
    operationId: "changePassword",
    tags: ["Accounts"],
    summary: "Change the password; every other session of the account ends",
    description:
      "The new password follows the signup rules. The session that asks stays; every other session of the " +
      "account ends (API keys are not sessions, and keep working). A wrong `currentPassword` is " +
      "`invalid_credentials` and counts as a failed login of this client address for the account's email " +
      "(`login_failures`: 10 a minute, then `429 rate_limited`).",
    middleware: [approvedSession, jsonBody] as const,
    request: { body: jsonRequest(PasswordChangeSchema) },
    responses: {
      204: { description: "Changed" },
    },
  },
  ["invalid_credentials", "rate_limited"],
);

export const authRoutes = createRouter()
  .openapi(signup, async (c) => {
    const { email, password } = c.req.valid("json");
    const now = Date.now();
    const row = {
      id: ulid(now),
      email,
      password_hash: await hashPassword(password),
      approved: 0,
      plan: null,
      trial_ends_at: trialEnd(now),
      created_at: isoTime(now),
    };
    if ((await insertAccount(c.var.db, row)) === "email_taken") throw new ApiError("email_taken");
    return c.json(toAccount(row, now), 201);
  })
  .openapi(login, async (c) => {
    const { email, password } = c.req.valid("json");
    // Counted as a failure until it succeeds, so concurrent guesses cannot pass the limit together.
    const failure = await limitLoginFailures(c, email);
    const row = await findAccountByEmail(c.var.db, email);
    // Verified even without an account, so a wrong email and a wrong password cost the same.
    const valid = await verifyPassword(password, row?.password_hash ?? null);
    if (!row || !valid) throw new ApiError("invalid_credentials");
    await failure.release();
    const now = Date.now();
    const token = await createSession(c.var.db, row.id, now);
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      secure: true,
      sameSite: "Strict",
      path: "/",
      maxAge: SESSION_LIFETIME_SECONDS,
    });
    return c.json(toAccount(row, now), 200);
  })
  .openapi(logout, async (c) => {
    await deleteSession(c.var.db, sessionOf(c).sessionId);
    deleteCookie(c, SESSION_COOKIE, { httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    return c.body(null, 204);
  })
  // The session's own query read the account: no second round trip.
  .openapi(account, async (c) => c.json(sessionOf(c).account, 200))
  .openapi(changePassword, async (c) => {
    const { currentPassword, newPassword } = c.req.valid("json");
    const session = sessionOf(c);
    // A guess at the password as a login is: counted until it proves right (login_failures).
    const failure = await limitLoginFailures(c, session.account.email);
    const previous = await findPasswordHash(c.var.db, session.accountId);
    const wrong = () =>
      new ApiError("invalid_credentials", {
        message: "The current password is wrong.",
        details: [{ path: "currentPassword", message: "The current password is wrong." }],
      });
    if (previous === null || !(await verifyPassword(currentPassword, previous))) throw wrong();
    await failure.release();
    const next = await hashPassword(newPassword);
    if (!(await replacePassword(c.var.db, session.accountId, { previous, next }, session.sessionId))) throw wrong();
    return c.body(null, 204);
  });

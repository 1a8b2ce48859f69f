import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import ipaddr from "ipaddr.js";
import type { AppEnv, CallerIdentity, MaybeCallerEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { documented } from "../http/route";
import { sha256Hex } from "../lib/crypto";
import type { ConsumeInput, ConsumeResult } from "./limiter";
import { BEACONS_PER_VIEW, POLICIES, type PolicyName, type RequestPolicyName, TENANT_MULTIPLIER } from "./policies";

type Bucket = ConsumeInput["buckets"][number] & { name: string };

/** A per-caller policy counts behind `authenticate` (its caller and project); a per-address one anywhere. */
type LimitedEnv = MaybeCallerEnv;

/** Where a policy's buckets live (one Durable Object) and what they are. */
export type Plan = { object: string; buckets: Bucket[] };

/**
 * The address a per-IP limit counts: an IPv4 address as it is, an IPv6 address by its /64, since
 * one client usually holds a whole /64.
 */
export function clientSubject(ip: string | undefined): string {
  if (!ip) return "ip:unknown";
  if (!ipaddr.IPv6.isValid(ip)) return `ip:${ip}`;
  const prefix = ipaddr.IPv6.parse(ip)
    .parts.slice(0, 4)
    .map((part) => part.toString(16));
  return `ip6:${prefix.join(":")}::/64`;
}

function callerSubject(caller: CallerIdentity): string {
  return caller.kind === "key" ? `key:${caller.keyId}` : `session:${caller.sessionId}`;
}

/** The policies counted per client address. */
type ClientPolicyName = { [K in PolicyName]: (typeof POLICIES)[K]["per"] extends "ip" ? K : never }[PolicyName];

/** A per-address policy's plan: one bucket, the client's, in the client's own object. */
export function clientPlan(name: ClientPolicyName, ip: string | undefined): Plan {
  const subject = clientSubject(ip);
  return { object: subject, buckets: [{ name, subject, limit: POLICIES[name].limit }] };
}

/** The plan of a policy counted per client address or per caller (per client and email: loginFailurePlan). */
function planFor<E extends LimitedEnv>(c: Context<E>, name: Exclude<PolicyName, "login_failures">): Plan {
  const policy = POLICIES[name];
  if (policy.per === "ip") return clientPlan(name as ClientPolicyName, c.req.header("cf-connecting-ip"));
  const { caller, projectId } = c.var;
  if (!caller) throw new Error(`the ${name} policy counts per caller: put it behind authenticate`);
  const tenant = projectId
    ? { name: `${name}_per_project`, subject: `project:${projectId}` }
    : { name: `${name}_per_account`, subject: `account:${caller.accountId}` };
  // Every bucket of an account's requests lives in the account's object: one call counts them all.
  return {
    object: `account:${caller.accountId}`,
    buckets: [
      { name, subject: callerSubject(caller), limit: policy.limit },
      { ...tenant, limit: policy.limit * TENANT_MULTIPLIER },
    ],
  };
}

function limiterOf(env: Env, object: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(object));
}

/** The RateLimit headers of an answer, naming the bucket it is about. */
function headersOf(bucket: Bucket, windowSeconds: number, result: ConsumeResult): Record<string, string> {
  return {
    "RateLimit-Policy": `"${bucket.name}";q=${bucket.limit};w=${windowSeconds}`,
    RateLimit: `"${bucket.name}";r=${result.remaining};t=${result.resetSeconds}`,
  };
}

/**
 * Counts one request against a policy's buckets, all in one call to their object (or, with
 * `mode: "peek"`, only asks whether they have room, counting nothing). A refusal is
 * `429 rate_limited` with `Retry-After`; the RateLimit headers name the bucket the answer is
 * about, on every answer or (for a second policy on a request that already has them) on refusal.
 */
async function count<E extends AppEnv>(
  c: Context<E>,
  name: PolicyName,
  plan: Plan,
  options: Answering & { mode?: "consume" | "peek" },
): Promise<void> {
  const input = inputOf(name, plan);
  const limiter = limiterOf(c.env, plan.object);
  const result = await (options.mode === "peek" ? limiter.peek(input) : limiter.consume(input));
  answer(c, name, plan, result, options);
}

/** What the object is asked about a policy's plan. */
function inputOf(name: PolicyName, { buckets }: Plan): ConsumeInput {
  const { windowSeconds } = POLICIES[name];
  return { policy: name, windowSeconds, buckets: buckets.map(({ subject, limit }) => ({ subject, limit })) };
}

/** How a count is answered: RateLimit headers always or only on refusal, and a refusal's message. */
type Answering = { headers: "always" | "on-refusal"; message?: string };

/** The answer to a count's result: its headers, and `429 rate_limited` when it was refused. */
function answer<E extends AppEnv>(
  c: Context<E>,
  name: PolicyName,
  { buckets }: Plan,
  result: ConsumeResult,
  options: Answering,
): void {
  const { windowSeconds } = POLICIES[name];
  if (result.allowed && options.headers === "on-refusal") return;
  const headers = headersOf(buckets[result.bucket] as Bucket, windowSeconds, result);
  for (const [header, value] of Object.entries(headers)) c.header(header, value);
  if (!result.allowed) {
    throw new ApiError("rate_limited", {
      ...(options.message ? { message: options.message } : {}),
      headers: { "Retry-After": String(result.resetSeconds) },
    });
  }
}

/**
 * Counts the request against `name`; sets RateLimit headers on every answer (naming the tighter
 * bucket), 429 past the limit.
 */
export function rateLimit(name: RequestPolicyName) {
  const middleware = createMiddleware<LimitedEnv>(async (c, next) => {
    await count(c, name, planFor(c, name), { headers: "always" });
    await next();
  });
  return documented(
    middleware,
    () => ["rate_limited"],
    undefined,
    undefined,
    () => ["RateLimit", "RateLimit-Policy"],
  );
}

/**
 * Counts one request of this client against a per-address policy, from inside a handler (for what
 * only some requests of a route do: a frame not yet made, say). 429 past the limit.
 */
export async function limitClient<E extends AppEnv>(c: Context<E>, name: ClientPolicyName): Promise<void> {
  await count(c, name, clientPlan(name, c.req.header("cf-connecting-ip")), { headers: "always" });
}

/**
 * Where one client's failed logins for one email are counted: a bucket of that pair, in the
 * client's own object (beside its per-address `login` bucket). Failures from other clients land
 * in other buckets, so they can never lock the email's owner out.
 */
export async function loginFailurePlan(ip: string | undefined, email: string): Promise<Plan> {
  const client = clientSubject(ip);
  const subject = `${client} email:${await sha256Hex(email.trim().toLowerCase())}`;
  return { object: client, buckets: [{ name: "login_failures", subject, limit: POLICIES.login_failures.limit }] };
}

/**
 * Reserves one of this client's failed-login slots for an email before the password is checked,
 * so concurrent guesses cannot pass the limit together; `release` gives it back when the login
 * succeeds. The same answer comes for a known and an unknown email. (A consequence: more than ten
 * logins to one email from one client in flight at the same instant are refused too, right or
 * wrong; the per-address limit allows no more than ten a minute anyway.)
 */
export async function limitLoginFailures<E extends AppEnv>(
  c: Context<E>,
  email: string,
): Promise<{ release: () => Promise<void> }> {
  const plan = await loginFailurePlan(c.req.header("cf-connecting-ip"), email);
  await count(
    c,
    "login_failures",
    plan,
    // Named in the headers only on refusal, instead of the per-address policy this request passed.
    { headers: "on-refusal", message: "Too many failed logins for this email from this address; retry later." },
  );
  const { subject } = plan.buckets[0] as Bucket;
  return { release: () => limiterOf(c.env, plan.object).release({ policy: "login_failures", subject }) };
}

/**
 * Limits guessing of the operator token, per client address. A missing or wrong token (`valid`
 * false) counts one failure, and is refused with 429 instead of 401 once the client has 10 in the
 * window. A right token counts nothing, so operators are never slowed by their own calls, but it
 * is refused too while its client is over the limit: otherwise a blocked client could go on
 * guessing, every guess still checked, and know the token by the first answer that is not a 429.
 * The object counts each failure as it answers, so concurrent guesses cannot pass the limit together.
 */
export async function limitOperatorFailures<E extends AppEnv>(c: Context<E>, valid: boolean): Promise<void> {
  const message = "Too many missing or wrong operator tokens from this address; retry later.";
  await count(
    c,
    "operator_failures",
    planFor(c, "operator_failures"),
    valid ? { mode: "peek", headers: "on-refusal", message } : { headers: "always", message },
  );
}

/**
 * Counts a viewing beacon (docs/analytics.md) of `view`: against its client address's bucket
 * (600 a minute) and its view's (60 a minute), both in the client's object, so one call checks and
 * counts the two, in the object's memory (no storage write per beacon; `RateLimiter.consumeBeacon`).
 * A view's beacons come from its player's address; one sent from elsewhere is counted in that
 * address's object. RateLimit headers on every answer; `429 rate_limited` past either. Whether the
 * beacon counts: false for a view past the views of its video the address may start a minute
 * (`VIEW_STARTS`), whose beacon adds nothing.
 */
export async function limitBeacon<E extends AppEnv>(
  c: Context<E>,
  view: { videoId: string; viewId: string },
): Promise<{ counts: boolean }> {
  const client = clientSubject(c.req.header("cf-connecting-ip"));
  const plan = {
    object: client,
    buckets: [
      { name: "beacons", subject: client, limit: POLICIES.beacons.limit },
      { name: "beacons_per_view", subject: `view:${view.viewId}`, limit: BEACONS_PER_VIEW },
    ],
  };
  const result = await limiterOf(c.env, plan.object).consumeBeacon({ ...inputOf("beacons", plan), view });
  answer(c, "beacons", plan, result, { headers: "always" });
  return { counts: result.counts };
}

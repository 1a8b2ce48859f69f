import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { bodyBytes } from "../http/body";
import type { CallerIdentity, MaybeCallerEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { documented } from "../http/route";
import { openText, sealText } from "../lib/crypto";
import type { Db } from "../lib/db";
import { drain } from "../lib/drain";
import { toHex } from "../lib/encoding";
import { acceptedSecrets, type RotatingSecret } from "../lib/secrets";
import { DAY, isoTime } from "../lib/time";
import { claimKey, deleteKeysBefore, type KeyRef, releaseKey, storeAnswer } from "./queries";

/** Keys are kept this long (docs/api-guide.md#retrying-safely); the scheduled sweep deletes older ones. */
export const KEY_LIFETIME_MS = DAY;
/** A running request holds its key this long; one that died lets a retry take it over after. */
const CLAIM_MS = 60_000;
/** The largest body an idempotent request may have (the upload completion's). */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** 1–255 printable ASCII characters. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** The response headers a replay repeats, besides the body. */
const REPLAYED_HEADERS = ["content-type", "location", "etag"];
const SEAL_LABEL = "idempotency-key answers";

type StoredAnswer = { status: number; headers: Record<string, string>; body: string };
type IdempotentEnv = MaybeCallerEnv;

/** The caller a key belongs to: the API key, the session's account, or the operator. */
function scopeOf(caller: CallerIdentity | undefined): string {
  if (!caller) return "operator";
  return caller.kind === "key" ? `key:${caller.keyId}` : `account:${caller.accountId}`;
}

const IdempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .optional()
    .openapi({
      description:
        "1–255 printable ASCII characters, kept 24 h per caller, method, path and query. A repeat of a request " +
        "that answered 2xx gets the same status and body again, with `Idempotent-Replayed: true`, and does " +
        "nothing more; while the first still runs, 409 idempotency_key_in_use; with another body, 422 " +
        "idempotency_key_reused. An answer other than 2xx leaves the key unused.",
      example: "8e1f6c2a-7b7e-4a0e-9f33-5a9c0e0d2b17",
    }),
});

/**
 * Safe retries for a POST (docs/api-guide.md#retrying-safely). Put it after authentication and the
 * rate limiter and before the body is parsed: it reads the body (to tell a repeat from another
 * request), claims the key in one statement, and then either replays the stored answer, refuses, or
 * lets the request run and stores a 2xx answer, encrypted, since answers may carry secrets (an API
 * key, a webhook secret). Without the header it does nothing.
 */
export const idempotent = documented(
  createMiddleware<IdempotentEnv>(async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) throw new ApiError("invalid_idempotency_key");
    const bytes = await bodyBytes(c, { accepts: () => true, maxBytes: MAX_BODY_BYTES });
    c.set("receivedBody", Promise.resolve(bytes));
    const url = new URL(c.req.url);
    const ref: KeyRef = { scope: scopeOf(c.var.caller), method: c.req.method, target: url.pathname + url.search, key };
    const bodyHash = toHex(await crypto.subtle.digest("SHA-256", bytes));
    const now = Date.now();
    const { row, claimed } = await claimKey(c.var.db, ref, bodyHash, now, CLAIM_MS);
    if (!claimed) {
      if (row.body_hash !== bodyHash) throw new ApiError("idempotency_key_reused");
      if (row.state === "running" || row.response === null) {
        const seconds = Math.max(1, Math.ceil((Date.parse(row.locked_until ?? "") - now) / 1000) || 1);
        throw new ApiError("idempotency_key_in_use", { headers: { "Retry-After": String(Math.min(seconds, 60)) } });
      }
      const answer = JSON.parse(await openAnswer(c.var.config.idempotencySecret, row.response)) as StoredAnswer;
      return new Response(answer.body, {
        status: answer.status,
        headers: { ...answer.headers, "Idempotent-Replayed": "true" },
      });
    }
    const lockedUntil = row.locked_until as string;
    try {
      await next();
    } catch (error) {
      await releaseKey(c.var.db, ref, lockedUntil);
      throw error;
    }
    const response = c.res;
    if (response.status < 200 || response.status >= 300 || c.get("idempotencyKeyUnused")) {
      await releaseKey(c.var.db, ref, lockedUntil);
      return;
    }
    const headers = Object.fromEntries(
      REPLAYED_HEADERS.flatMap((name) => {
        const value = response.headers.get(name);
        return value === null ? [] : [[name, value]];
      }),
    );
    const answer: StoredAnswer = { status: response.status, headers, body: await response.clone().text() };
    await storeAnswer(
      c.var.db,
      ref,
      lockedUntil,
      await sealText(c.var.config.idempotencySecret.current, SEAL_LABEL, JSON.stringify(answer)),
    );
  }),
  () => ["invalid_idempotency_key", "idempotency_key_in_use", "idempotency_key_reused"],
  undefined,
  () => IdempotencyHeaders,
  (status) => (status.startsWith("2") ? ["Idempotent-Replayed"] : []),
);

/**
 * A stored answer, opened with the secret it was sealed with: the current one, or the previous one
 * while a rotation is under way (keep it the 24 hours a key lives). One neither opens throws.
 */
async function openAnswer(secret: RotatingSecret, sealed: string): Promise<string> {
  const [current, ...others] = acceptedSecrets(secret);
  try {
    return await openText(current as string, SEAL_LABEL, sealed);
  } catch (error) {
    for (const value of others) {
      try {
        return await openText(value, SEAL_LABEL, sealed);
      } catch {}
    }
    throw error;
  }
}

/** Deletes the keys past their 24 hours, in bounded batches (the next run goes on); how many. */
export function deleteExpiredKeys(db: Db, now: number = Date.now()): Promise<number> {
  const before = isoTime(now - KEY_LIFETIME_MS);
  return drain((limit) => deleteKeysBefore(db, before, limit));
}

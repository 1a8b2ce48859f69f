import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { OPERATOR_PLANS, toAccount } from "../auth/account";
import { listAccounts, setApproved, setPlan, suspendAccount } from "../auth/account-queries";
import { AccountSchema } from "../auth/schemas";
import { jsonBody } from "../http/body";
import type { AppEnv } from "../http/context";
import { bearerToken } from "../http/credentials";
import { ApiError } from "../http/errors";
import { found } from "../http/found";
import { PAGE_QUERY_CODES, PageQuerySchema, pageOf, parsePage } from "../http/pagination";
import { documented, route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, pathId } from "../http/schemas";
import { validationHook } from "../http/validation";
import { idempotent } from "../idempotency/middleware";
import { sha256Hex, timingSafeEqual } from "../lib/crypto";
import { limitOperatorFailures } from "../rate-limit/middleware";

/**
 * The operator API exists only while ADMIN_TOKEN is set; it answers 404 otherwise. A missing or
 * wrong token is 401, and counts against its client's `operator_failures` (429 past 10 a minute).
 */
const operatorOnly = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const token = c.var.config.adminToken;
    if (!token) throw new ApiError("not_found");
    const presented = bearerToken(c.req.header("authorization")) ?? "";
    // Digests have one length, so neither the comparison's time nor its path shows the token's.
    const valid = timingSafeEqual(await sha256Hex(presented), await sha256Hex(token));
    await limitOperatorFailures(c, valid);
    if (!valid) throw new ApiError("unauthorized");
    await next();
  }),
  () => ["not_found", "unauthorized", "rate_limited"],
  () => [{ operatorToken: [] }],
);

const AccountParams = z.object({ accountId: pathId("account") });
const PlanBody = z.strictObject({ plan: z.enum(OPERATOR_PLANS) }).openapi("OperatorPlan");

function accountRoute(method: "post" | "put", action: string, summary: string) {
  return {
    method,
    path: `/v1/admin/accounts/{accountId}/${action}`,
    operationId: `${action}Account`,
    tags: ["Operator"],
    summary,
    // Every POST takes an Idempotency-Key (docs/api-guide.md#retrying-safely); PUT is idempotent by itself.
    middleware: method === "post" ? [operatorOnly, idempotent] : [operatorOnly],
    request: { params: AccountParams },
  };
}

const responses = { 200: jsonResponse(AccountSchema, "The account") };

const approve = route({ ...accountRoute("post", "approve", "Approve an account"), responses });
const suspend = route({
  ...accountRoute("post", "suspend", "Suspend an account: approved becomes false and its sessions end"),
  responses,
});
const plan = route({
  ...accountRoute("put", "plan", "Set the plan an account moves to after its trial"),
  middleware: [operatorOnly, jsonBody] as const,
  request: { params: AccountParams, body: jsonRequest(PlanBody) },
  responses,
});

const list = route(
  {
    method: "get",
    path: "/v1/admin/accounts",
    operationId: "listAccounts",
    tags: ["Operator"],
    summary: "Accounts, newest first; approved=false finds those waiting for approval",
    middleware: [operatorOnly] as const,
    request: {
      query: PageQuerySchema.extend({
        approved: z
          .enum(["true", "false"])
          .optional()
          .openapi({ description: "true: only approved accounts; false: only the others" }),
      }),
    },
    responses: {
      200: jsonResponse(z.object({ data: z.array(AccountSchema), nextCursor: z.string().nullable() }), "One page"),
    },
  },
  ["invalid_limit", "invalid_cursor", "invalid_query"],
);

export const adminRoutes = createRouter()
  .openapi(
    list,
    async (c) => {
      const { approved, ...query } = c.req.valid("query");
      // A cursor is valid only for the listing it came from: this filter.
      const cursors = { secret: c.var.config.cursorSecret, scope: JSON.stringify(["accounts", approved ?? null]) };
      const { limit, after } = await parsePage(query, cursors);
      const filter = approved === undefined ? undefined : approved === "true";
      const page = await pageOf(await listAccounts(c.var.db, filter, limit, after), limit, cursors);
      const now = Date.now();
      return c.json({ data: page.data.map((row) => toAccount(row, now)), nextCursor: page.nextCursor }, 200);
    },
    validationHook({ query: { ...PAGE_QUERY_CODES, approved: "invalid_query" } }),
  )
  .openapi(approve, async (c) => {
    const account = await found("not_found", c.req.valid("param").accountId, (id) => setApproved(c.var.db, id, true));
    return c.json(toAccount(account), 200);
  })
  .openapi(suspend, async (c) => {
    const account = await found("not_found", c.req.valid("param").accountId, (id) => suspendAccount(c.var.db, id));
    return c.json(toAccount(account), 200);
  })
  .openapi(plan, async (c) => {
    const plan = c.req.valid("json").plan;
    const account = await found("not_found", c.req.valid("param").accountId, (id) => setPlan(c.var.db, id, plan));
    return c.json(toAccount(account), 200);
  });

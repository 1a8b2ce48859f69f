import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OPERATOR_PLANS } from "../../src/auth/account";
import { MODES } from "../../src/lib/tenant";
import { VIDEO_ERROR_CODES, VIDEO_STATUSES, VISIBILITIES } from "../../src/videos/model";
import { DELIVERY_STATES } from "../../src/webhooks/model";

/** The values a column's `CHECK (column IN (…))` allows, read from the live schema. */
async function checkedValues(table: string, column: string): Promise<string[]> {
  const sql = await env.DB.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .bind(table)
    .first<string>("sql");
  const list = new RegExp(`CHECK \\(${column} IN \\(([^)]*)\\)\\)`).exec(sql ?? "")?.[1] ?? "";
  return [...list.matchAll(/'([^']*)'/g)].map((match) => match[1] as string);
}

describe("each closed set is one const array, and the database's CHECK says the same", () => {
  it.each([
    ["videos", "status", VIDEO_STATUSES],
    ["videos", "visibility", VISIBILITIES],
    ["videos", "error_code", VIDEO_ERROR_CODES],
    ["api_keys", "mode", MODES],
    ["accounts", "plan", OPERATOR_PLANS],
    ["webhook_deliveries", "state", DELIVERY_STATES],
  ] as const)("%s.%s", async (table, column, values) => {
    expect((await checkedValues(table, column)).sort()).toEqual([...values].sort());
  });
});

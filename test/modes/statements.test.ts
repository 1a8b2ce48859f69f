import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/http/route";
import { MODES } from "../../src/lib/tenant";
import { type BudgetedRoute, ROUND_TRIP_BUDGET } from "../round-trip-budget";
import { apiWith } from "../support/app";
import { CALLS, workspace } from "../support/calls";
import { modeBindingProblem, onModeTables, recordingBindings, unboundStatements } from "../support/modes";

/**
 * Test mode's rule as the database sees it (docs/api-guide.md#test-mode-and-going-live): every
 * statement that a request made with an API key runs on videos, tus_uploads or webhook_endpoints
 * binds the key's mode. Each operation an API key may call runs on its success path (the round-trip
 * budget's calls) with a key of each mode, and every statement it ran is read back with the values
 * bound to it. test/modes/isolation.test.ts runs the other mode's objects through the same check;
 * scripts/mode-scoping.mjs checks the query modules' source.
 */

/** The operations an API key may call, by the round-trip budget's names. */
const KEY_ROUTES = (Object.keys(ROUND_TRIP_BUDGET) as BudgetedRoute[]).filter((name) => {
  const [method, path] = name.split(" ");
  const config = ROUTES.find((route) => route.method.toUpperCase() === method && route.path === path);
  return (config?.security ?? []).some((requirement) => "apiKey" in requirement);
});

describe("the operations an API key may call", () => {
  it("are every operation that documents apiKey security, at least the 21 of videos, uploads and webhooks", () => {
    const documented = ROUTES.filter((route) => (route.security ?? []).some((r) => "apiKey" in r)).map(
      (route) => `${route.method.toUpperCase()} ${route.path}`,
    );
    const covered = new Set(KEY_ROUTES.map((name) => name.split(" ").slice(0, 2).join(" ")));
    expect(documented.filter((operation) => !covered.has(operation))).toEqual([]);
    expect(covered.size).toBeGreaterThanOrEqual(21);
  });
});

describe.each(MODES)("with a %s key, every statement on a table with modes binds the key's mode", (mode) => {
  it.each(KEY_ROUTES)("%s", async (route) => {
    const ws = await workspace(mode);
    const call = await CALLS[route](ws);
    expect(new Headers(call.init?.headers).get("authorization"), "the call is made with the key").toBe(
      `Bearer ${ws.key}`,
    );
    const { bindings, ran } = recordingBindings();
    const response = await apiWith(bindings, call.path, call.init);
    expect(response.status, await response.clone().text()).toBe(call.status);
    expect(onModeTables(ran), "the operation reads or writes a table with modes").toBeGreaterThan(0);
    expect(unboundStatements(ran, mode)).toEqual([]);
  });
});

describe("the check of a statement's mode", () => {
  const ran = (sql: string, ...params: unknown[]) => ({ sql, params });

  it("passes a statement on no table with modes", () => {
    expect(modeBindingProblem(ran("SELECT * FROM projects WHERE id = ?", "p"), "test")).toBeNull();
  });

  it("refuses a statement on a table with modes that binds none", () => {
    expect(modeBindingProblem(ran("SELECT * FROM videos WHERE id = ?", "v"), "test")).toMatch(/binds no mode/);
    expect(
      modeBindingProblem(
        ran("SELECT u.* FROM tus_uploads u JOIN videos v ON v.id = u.video_id WHERE u.id = ?", "u"),
        "live",
      ),
    ).toMatch(/binds no mode/);
  });

  it("reads the value bound to the predicate, by SQLite's numbering of ? and ?N", () => {
    const sql = "UPDATE videos SET title = ?2 WHERE id = ?1 AND livemode = coalesce(?3, livemode) AND status = ?";
    expect(modeBindingProblem(ran(sql, "v", "t", 0, "ready"), "test")).toBeNull();
    expect(modeBindingProblem(ran(sql, "v", "t", 0, "ready"), "live")).toMatch(/bound to 0, not 1/);
    // A null binding sees both modes: no key may run it.
    expect(modeBindingProblem(ran(sql, "v", "t", null, "ready"), "test")).toMatch(/bound to null/);
    const bare = "SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ? AND livemode = ?";
    expect(modeBindingProblem(ran(bare, "e", "p", 1), "live")).toBeNull();
    expect(modeBindingProblem(ran(bare, "e", 1, 0), "live")).toMatch(/bound to 0/);
  });

  it("counts no ? or livemode inside a string literal", () => {
    const sql = "SELECT * FROM videos WHERE title = 'livemode = ?' AND id = ?";
    expect(modeBindingProblem(ran(sql, "v"), "test")).toMatch(/binds no mode/);
  });

  it("holds every mode predicate of a statement to the key's mode", () => {
    const sql =
      "SELECT * FROM videos WHERE livemode = ?1 AND id IN (SELECT video_id FROM tus_uploads WHERE livemode = ?2)";
    expect(modeBindingProblem(ran(sql, 0, 0), "test")).toBeNull();
    expect(modeBindingProblem(ran(sql, 0, 1), "test")).toMatch(/bound to 1/);
  });

  it("reads the livemode an insert writes, from VALUES or a SELECT", () => {
    const values = "INSERT INTO videos (id, project_id, livemode, title) VALUES (?, ?, ?, ?)";
    expect(modeBindingProblem(ran(values, "v", "p", 1, "t"), "live")).toBeNull();
    expect(modeBindingProblem(ran(values, "v", "p", 1, "t"), "test")).toMatch(/livemode ← \? is bound to 1/);
    const select =
      "INSERT INTO webhook_endpoints (id, livemode, url) SELECT ?1, ?3, ?2 WHERE (SELECT count(*) FROM webhook_endpoints WHERE livemode = ?3) < 20";
    expect(modeBindingProblem(ran(select, "e", "u", 0), "test")).toBeNull();
    expect(modeBindingProblem(ran(select, "e", "u", 1), "test")).toMatch(/bound to 1/);
    const constant = "INSERT INTO tus_uploads (id, livemode) VALUES (?, 1)";
    expect(modeBindingProblem(ran(constant, "u"), "live")).toMatch(/livemode ← 1 is bound to undefined/);
    expect(modeBindingProblem(ran("INSERT INTO tus_uploads (id, project_id) VALUES (?, ?)", "u", "p"), "live")).toMatch(
      /without its livemode/,
    );
  });
});

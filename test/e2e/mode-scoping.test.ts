import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkModeScoping } from "../../scripts/mode-scoping.mjs";

/**
 * The check `npm run arch` makes of the query modules (scripts/mode-scoping.mjs): every statement
 * on a table whose rows have a mode binds one. Here: it passes the real modules, it fails each of
 * them when any one of their mode predicates is taken out, and it refuses each way of forgetting
 * the mode.
 */

const root = path.resolve(import.meta.dirname, "../..");
const queryModules = readdirSync(path.join(root, "src"), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && /(^|-)queries\.ts$/.test(entry.name))
  .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));

const check = (text: string, file = "src/videos/queries.ts") => checkModeScoping(file, text).problems;

const HEADER = 'import { modeConditions, modeParam, type Tenant } from "../lib/tenant";\n';

describe("the mode-scoping check on the query modules", () => {
  it("passes them, finding the functions that act for a caller", () => {
    const results = queryModules.map((file) => checkModeScoping(file, readFileSync(path.join(root, file), "utf8")));
    expect(results.flatMap((result) => result.problems)).toEqual([]);
    const scoped = results.flatMap((result) => result.scoped);
    for (const name of [
      "src/videos/queries.ts: tenantVideoStatement",
      "src/videos/queries.ts: listVideos",
      "src/videos/queries.ts: deleteVideosStatements",
      "src/uploads/queries.ts: findTusUpload",
      "src/webhooks/endpoint-queries.ts: endpointStatement",
      "src/webhooks/endpoint-queries.ts: insertEndpoint",
    ]) {
      expect(scoped).toContain(name);
    }
  });

  it("fails a module as soon as any one of its mode predicates is taken out", () => {
    const predicate = /livemode = coalesce\(\?\d*, (?:\w+\.)?livemode\)|livemode = \?\d*/g;
    let mutants = 0;
    for (const file of queryModules) {
      const text = readFileSync(path.join(root, file), "utf8");
      for (const match of text.matchAll(predicate)) {
        const mutant = `${text.slice(0, match.index)}1 = 1${text.slice(match.index + match[0].length)}`;
        expect(check(mutant, file), `${file} without ${match[0]} at ${match.index}`).not.toEqual([]);
        mutants += 1;
      }
    }
    expect(mutants).toBeGreaterThanOrEqual(17);
  });

  it("refuses a statement of a function that takes a Tenant but binds no mode", () => {
    const text = `${HEADER}
export function findVideo(db: Db, tenant: Tenant, id: string) {
  return db.prepare("SELECT * FROM videos WHERE id = ? AND project_id = ?").bind(id, tenant.projectId).first();
}`;
    expect(check(text)).toEqual([expect.stringMatching(/findVideo: a statement on videos binds no mode/)]);
  });

  it("refuses a mode predicate bound to something other than the tenant's mode", () => {
    const text = `${HEADER}
export function findVideo(db: Db, tenant: Tenant, id: string) {
  return db.prepare("SELECT * FROM videos WHERE id = ? AND livemode = ?").bind(id, 1).first();
}`;
    expect(check(text)).toEqual([expect.stringMatching(/findVideo: its statements' mode is not its tenant's/)]);
  });

  it("refuses a function on these tables that takes no Tenant, unless it says why it acts for every mode", () => {
    const body = `export function byId(db: Db, id: string) {
  return db.prepare(\`UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?\`).bind(id);
}`;
    expect(check(body, "src/webhooks/endpoint-queries.ts")).toEqual([
      expect.stringMatching(/byId: a statement on webhook_endpoints and no Tenant parameter/),
    ]);
    expect(
      check(`/** Why.\n *\n * @allModes delivery names it by id */\n${body}`, "src/webhooks/x-queries.ts"),
    ).toEqual([]);
    expect(check(`/** @allModes */\n${body}`, "src/webhooks/x-queries.ts")).toEqual([
      expect.stringMatching(/byId: @allModes needs its reason/),
    ]);
    // A table named in a join, or only through a constant of the module, counts the same.
    const joined = `const COLUMNS = "d.id FROM webhook_deliveries d JOIN tus_uploads u ON u.id = d.x";
export function pending(db: Db) {
  return db.prepare(\`SELECT \${COLUMNS} WHERE d.state = 'pending'\`).all();
}`;
    expect(check(joined)).toEqual([expect.stringMatching(/pending: a statement on tus_uploads/)]);
    const indexed = `const SQL = { v: "DELETE FROM videos WHERE project_id = ?1" } as const;
export function purge(db: Db, table: keyof typeof SQL, id: string) {
  return db.prepare(SQL[table]).bind(id);
}`;
    expect(check(indexed)).toEqual([expect.stringMatching(/purge: a statement on videos/)]);
  });

  it("reads a predicate through the constants a statement interpolates, and nothing it cannot read", () => {
    const local = `${HEADER}
export function swap(db: Db, tenant: Tenant, id: string) {
  const where = "id = ?1 AND livemode = coalesce(?2, livemode)";
  return db.prepare(\`UPDATE videos SET title = 'x' WHERE \${where}\`).bind(id, modeParam(tenant));
}`;
    expect(check(local)).toEqual([]);
    const unreadable = `${HEADER}
export function swap(db: Db, tenant: Tenant, id: string, where: string) {
  return db.prepare(\`UPDATE videos SET title = 'x' WHERE \${where}\`).bind(id, modeParam(tenant));
}`;
    expect(check(unreadable)).toEqual([expect.stringMatching(/swap: a statement on videos binds no mode/)]);
  });

  it("holds an insert to writing the row's livemode, and its own reads to one mode", () => {
    const without = `export function insertVideoStatement(db: Db, row: VideoRow) {
  return db.prepare("INSERT INTO videos (id, project_id) VALUES (?, ?)").bind(row.id, row.project_id);
}`;
    expect(check(without)).toEqual([expect.stringMatching(/inserts into videos without its livemode/)]);
    const quota = `export function insertEndpoint(db: Db, row: EndpointRow) {
  return db.prepare(\`INSERT INTO webhook_endpoints (id, livemode) SELECT ?1, ?2
    WHERE (SELECT count(*) FROM webhook_endpoints WHERE project_id = ?3) < 20\`).bind(row.id, row.livemode, row.project_id);
}`;
    expect(check(quota)).toEqual([expect.stringMatching(/an insert reads webhook_endpoints of every mode/)]);
  });

  it("holds a listing built from conditions to the tenant's modeConditions", () => {
    const list = (conditions: string) => `${HEADER}
export async function listVideos(db: Db, tenant: Tenant, after: Position | null) {
  const { sql, params } = newestFirstPage("videos", [${conditions}], after, 20);
  return db.prepare(sql).bind(...params).all();
}`;
    expect(check(list('{ sql: "project_id = ?", params: [tenant.projectId] }'))).toEqual([
      expect.stringMatching(/listVideos: lists videos without modeConditions\(tenant\)/),
    ]);
    expect(check(list('{ sql: "project_id = ?", params: [tenant.projectId] }, ...modeConditions(tenant)'))).toEqual([]);
  });

  it("takes the encoding pipeline's statements as system work", () => {
    const text = `export function runningAttempt(db: Db, videoId: string) {
  return db.prepare("SELECT * FROM videos WHERE id = ?1").bind(videoId).first();
}`;
    expect(check(text, "src/encoding/pipeline/queries.ts")).toEqual([]);
    expect(checkModeScoping("src/encoding/pipeline/queries.ts", text).allModes).toEqual([
      "src/encoding/pipeline/queries.ts: runningAttempt",
    ]);
  });
});

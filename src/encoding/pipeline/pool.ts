import { DurableObject } from "cloudflare:workers";
import type { Priority } from "../../../media-plan/protocol.mjs";
import { readConfig } from "../../config";
import { logError } from "../../lib/log";
import { coordinatorOf } from "./coordinator-stub";

/**
 * How long a slot stays granted without a word from its holder: a coordinator renews its slots
 * every few seconds while it works (`renew`), so a lease that runs out belongs to one that is gone.
 */
export const LEASE_MS = 2 * 60_000;
const SWEEP_MS = 30_000;

/** How many encoder slots there are of each kind, and how many background ones one video may hold. */
export type PoolSize = { interactive: number; background: number; perVideo: number };

type Lease = { slot: string; kind: Priority; video: string; project: string; until: number };
type Demand = { video: string; kind: Priority; project: string; count: number; since: number };

/** The names of the slots of a kind: `i0`…, `b0`…; each is one encoder instance's place for one job. */
export function slotNames(kind: Priority, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${kind[0]}${i}`);
}

/**
 * The encoders' slots, handed out fairly (one object for the whole deployment: `idFromName("pool")`).
 * Each video's coordinator asks for the slots it could use now (`acquire`, which replaces what it
 * asked before) and gives each back when its job ends (`release`). A free slot goes to the waiting
 * video whose project holds the fewest slots of that kind, then whose project has used that kind's
 * slots the least time (a fair share by use, as a CPU scheduler's), then the video holding the
 * fewest, then the one waiting longest: so while one project's videos are encoding, another
 * project's short jobs take the next slots that free, one after the other (with one slot too,
 * where both hold none once it frees), and a project alone may use every slot. A video holds at
 * most `perVideo` background slots. Grants made later are pushed to the coordinator (`granted`).
 */
export class EncoderPool extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS leases (
      slot TEXT PRIMARY KEY, kind TEXT NOT NULL, video TEXT NOT NULL, project TEXT NOT NULL, until INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS demand (
      video TEXT NOT NULL, kind TEXT NOT NULL, project TEXT NOT NULL, count INTEGER NOT NULL, since INTEGER NOT NULL,
      PRIMARY KEY (video, kind))`);
    // How long each project has held slots of a kind (ms, charged when a slot is given back or its
    // lease runs out), and when each held slot was granted. A project that starts asking begins
    // level with the least used one: it neither waits behind the others' history nor jumps ahead
    // of them for long. Only projects with leases or demand are remembered.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS usage (
      project TEXT NOT NULL, kind TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (project, kind))`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS granted (
      slot TEXT PRIMARY KEY, project TEXT NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL)`);
  }

  private size(): PoolSize {
    return readConfig(this.env).encoderPool;
  }

  /**
   * The video wants `want` slots of `kind` now: grants what is free and fair at once, remembers
   * the rest (replacing what the video asked before) for later grants.
   */
  async acquire(request: { videoId: string; projectId: string; kind: Priority; want: number }, now = Date.now()) {
    const { videoId, projectId, kind } = request;
    const previous = this.sql
      .exec<{ since: number }>("SELECT since FROM demand WHERE video = ? AND kind = ?", videoId, kind)
      .toArray()[0];
    if (request.want > 0) {
      this.sql.exec(
        "INSERT OR REPLACE INTO demand (video, kind, project, count, since) VALUES (?, ?, ?, ?, ?)",
        videoId,
        kind,
        projectId,
        request.want,
        previous?.since ?? now,
      );
      this.sql.exec(
        `INSERT OR IGNORE INTO usage (project, kind, used)
         VALUES (?1, ?2, COALESCE((SELECT MIN(used) FROM usage WHERE kind = ?2), 0))`,
        projectId,
        kind,
      );
    } else {
      this.sql.exec("DELETE FROM demand WHERE video = ? AND kind = ?", videoId, kind);
    }
    const grants = this.allocate(now);
    await this.arm();
    const mine = grants.get(videoId)?.[kind] ?? [];
    this.push(grants, { video: videoId, kind });
    return mine;
  }

  /** The video is done with these slots: they go to whoever waits. */
  release(videoId: string, slots: string[], now = Date.now()) {
    for (const slot of slots) this.sql.exec("DELETE FROM leases WHERE slot = ? AND video = ?", slot, videoId);
    this.push(this.allocate(now));
  }

  /** The video still uses these slots. */
  renew(videoId: string, slots: string[], now = Date.now()) {
    for (const slot of slots) {
      this.sql.exec("UPDATE leases SET until = ? WHERE slot = ? AND video = ?", now + LEASE_MS, slot, videoId);
    }
  }

  /** The video needs nothing more (it is ready, errored or deleted): its slots and its wishes go. */
  forget(videoId: string, now = Date.now()) {
    this.sql.exec("DELETE FROM leases WHERE video = ?", videoId);
    this.sql.exec("DELETE FROM demand WHERE video = ?", videoId);
    this.push(this.allocate(now));
  }

  /** Where the pool stands: its leases and what is waiting (for tests and the README's figures). */
  state() {
    return {
      leases: this.sql.exec<Lease>("SELECT * FROM leases ORDER BY slot").toArray(),
      demand: this.sql.exec<Demand>("SELECT * FROM demand ORDER BY since").toArray(),
    };
  }

  override async alarm() {
    const now = Date.now();
    this.sql.exec("DELETE FROM leases WHERE until < ?", now);
    this.push(this.allocate(now));
    await this.arm();
  }

  private async arm() {
    const busy = this.sql
      .exec<{ n: number }>("SELECT (SELECT COUNT(*) FROM leases) + (SELECT COUNT(*) FROM demand) AS n")
      .one().n;
    if (busy > 0 && (await this.ctx.storage.getAlarm()) === null)
      await this.ctx.storage.setAlarm(Date.now() + SWEEP_MS);
  }

  /**
   * Hands every free slot to the fairest waiting video, one at a time; returns the grants made,
   * by video and kind. Expired leases are free.
   */
  private allocate(now: number): Map<string, Partial<Record<Priority, string[]>>> {
    this.sql.exec("DELETE FROM leases WHERE until < ?", now);
    this.charge(now);
    const size = this.size();
    const grants = new Map<string, Partial<Record<Priority, string[]>>>();
    for (const kind of ["interactive", "background"] as const) {
      const taken = new Set(
        this.sql
          .exec<{ slot: string }>("SELECT slot FROM leases WHERE kind = ?", kind)
          .toArray()
          .map((r) => r.slot),
      );
      const free = slotNames(kind, size[kind]).filter((slot) => !taken.has(slot));
      while (free.length > 0) {
        const next = this.sql
          .exec<Demand>(
            `SELECT d.* FROM demand d
             WHERE d.kind = ?1 AND d.count > 0
               AND (?1 = 'interactive' OR (SELECT COUNT(*) FROM leases l WHERE l.video = d.video AND l.kind = ?1) < ?2)
             ORDER BY (SELECT COUNT(*) FROM leases l WHERE l.project = d.project AND l.kind = ?1),
                      COALESCE((SELECT u.used FROM usage u WHERE u.project = d.project AND u.kind = ?1), 0),
                      (SELECT COUNT(*) FROM leases l WHERE l.video = d.video AND l.kind = ?1),
                      d.since
             LIMIT 1`,
            kind,
            size.perVideo,
          )
          .toArray()[0];
        if (!next) break;
        const slot = free.shift() as string;
        this.sql.exec(
          "INSERT INTO leases (slot, kind, video, project, until) VALUES (?, ?, ?, ?, ?)",
          slot,
          kind,
          next.video,
          next.project,
          now + LEASE_MS,
        );
        this.sql.exec(
          "INSERT OR REPLACE INTO granted (slot, project, kind, at) VALUES (?, ?, ?, ?)",
          slot,
          next.project,
          kind,
          now,
        );
        if (next.count > 1)
          this.sql.exec("UPDATE demand SET count = count - 1 WHERE video = ? AND kind = ?", next.video, kind);
        else this.sql.exec("DELETE FROM demand WHERE video = ? AND kind = ?", next.video, kind);
        const forVideo = grants.get(next.video) ?? {};
        forVideo[kind] = [...(forVideo[kind] ?? []), slot];
        grants.set(next.video, forVideo);
      }
    }
    this.sql.exec(
      "DELETE FROM usage WHERE project NOT IN (SELECT project FROM leases) AND project NOT IN (SELECT project FROM demand)",
    );
    return grants;
  }

  /** Adds to each project's use the time it held the slots it no longer holds (given back, run out). */
  private charge(now: number) {
    const gone = "NOT EXISTS (SELECT 1 FROM leases l WHERE l.slot = g.slot AND l.project = g.project)";
    this.sql.exec(
      `INSERT INTO usage (project, kind, used)
       SELECT g.project, g.kind, SUM(MAX(0, ?1 - g.at)) FROM granted g WHERE ${gone} GROUP BY g.project, g.kind
       ON CONFLICT (project, kind) DO UPDATE SET used = used + excluded.used`,
      now,
    );
    this.sql.exec(`DELETE FROM granted AS g WHERE ${gone}`);
  }

  /**
   * Tells each coordinator of the slots it was granted (but `answered`, the grants a caller gets in
   * its answer); a grant a coordinator cannot take (it failed to answer) is freed again. Not
   * awaited by the pool's callers: a coordinator told of a grant asks the pool again, and a caller
   * waiting on that would wait on itself (measured: two coordinators' probes held 61 s each, until
   * a takeover broke the wait).
   */
  private push(grants: Map<string, Partial<Record<Priority, string[]>>>, answered?: { video: string; kind: Priority }) {
    if (grants.size === 0) return;
    const pushing = Promise.all(
      [...grants].flatMap(([videoId, kinds]) =>
        Object.entries(kinds)
          .filter(([kind]) => !(answered && answered.video === videoId && answered.kind === kind))
          .map(async ([kind, slots]) => {
            try {
              await coordinatorOf(this.env, videoId).granted(kind as Priority, slots);
            } catch (error) {
              logError("encoder pool: grant", error, { videoId });
              for (const slot of slots) this.sql.exec("DELETE FROM leases WHERE slot = ? AND video = ?", slot, videoId);
            }
          }),
      ),
    );
    this.ctx.waitUntil(pushing);
  }
}

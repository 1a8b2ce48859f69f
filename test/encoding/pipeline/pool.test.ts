import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EncoderPool } from "../../../src/encoding/pipeline/pool";

/**
 * The pool's fair order, on its own (two background slots here: vitest.config.ts). The videos are
 * made up, so the grants the pool would push to their coordinators are kept in the object instead.
 */

let pools = 0;
async function newPool() {
  const pool = env.ENCODER_POOL.get(env.ENCODER_POOL.idFromName(`pool-test-${pools++}`));
  await runInDurableObject(pool, (instance: EncoderPool) => {
    Object.assign(instance, { push: () => {} });
  });
  return pool;
}

/** `videoId` (of `projectId`) asks for `want` background slots: the slots granted at once. */
function acquire(pool: DurableObjectStub<EncoderPool>, projectId: string, videoId: string, want: number, now: number) {
  return runInDurableObject(pool, (instance: EncoderPool) =>
    instance.acquire({ videoId, projectId, kind: "background", want }, now),
  );
}

/** `videoId` gives `slot` back: which video holds it then. */
function releaseAndSee(pool: DurableObjectStub<EncoderPool>, videoId: string, slot: string, now: number) {
  return runInDurableObject(pool, (instance: EncoderPool) => {
    instance.release(videoId, [slot], now);
    return instance.state().leases.find((lease) => lease.slot === slot)?.video ?? null;
  });
}

describe("the encoder pool's fair order", () => {
  it("a project alone may use every slot; a freed slot goes to the project holding fewest", async () => {
    const pool = await newPool();
    expect(await acquire(pool, "busy", "busy-1", 2, 1000)).toEqual(["b0", "b1"]);
    expect(await acquire(pool, "busy", "busy-2", 3, 1001)).toEqual([]);
    expect(await acquire(pool, "other", "other-1", 1, 1002)).toEqual([]);
    // busy holds one after the release, other none: other's video goes first, though it came last.
    expect(await releaseAndSee(pool, "busy-1", "b0", 1003)).toBe("other-1");
  });

  it("between projects holding as many, the one that used slots the least goes first, again while it still has", async () => {
    const pool = await newPool();
    expect(await acquire(pool, "busy", "busy-1", 1, 0)).toEqual(["b0"]);
    expect(await acquire(pool, "third", "third-1", 1, 0)).toEqual(["b1"]);
    // busy's second video has waited longer than other's; both projects hold none once b0 frees.
    expect(await acquire(pool, "busy", "busy-2", 4, 1)).toEqual([]);
    expect(await acquire(pool, "other", "other-1", 1, 2)).toEqual([]);
    // busy held b0 15 s, other nothing yet: other's clip goes first.
    expect(await releaseAndSee(pool, "busy-1", "b0", 15_000)).toBe("other-1");
    // Its next short job goes first too: 1 s of use is still less than busy's 15 s.
    expect(await acquire(pool, "other", "other-1", 2, 15_001)).toEqual([]);
    expect(await releaseAndSee(pool, "other-1", "b0", 16_000)).toBe("other-1");
    // A project that starts asking now begins level with the least used (third, with nothing charged
    // while it holds b1): not ahead of other's 1 s nor behind busy's 15 s.
    expect(await acquire(pool, "late", "late-1", 1, 16_001)).toEqual([]);
    expect(await releaseAndSee(pool, "other-1", "b0", 17_000)).toBe("late-1");
  });

  it("forgets the use of projects with nothing held or wanted", async () => {
    const pool = await newPool();
    expect(await acquire(pool, "once", "once-1", 1, 1000)).toEqual(["b0"]);
    await runInDurableObject(pool, (instance: EncoderPool) => instance.forget("once-1", 1001));
    const kept = await runInDurableObject(pool, (_: EncoderPool, state) =>
      state.storage.sql.exec("SELECT project FROM usage UNION ALL SELECT slot FROM granted").toArray(),
    );
    expect(kept).toEqual([]);
  });
});

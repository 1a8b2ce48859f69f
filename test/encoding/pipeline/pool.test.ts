import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EncoderPool } from "../../../src/encoding/pipeline/pool";

/**
 * The pool's fair order, on its own (two background slots here: vitest.config.ts). Grants made to
 * a video other than the caller are pushed to its coordinator, which for these made-up videos gives
 * them back; so each release is read within the same call, before that push lands.
 */

let pools = 0;
function newPool() {
  return env.ENCODER_POOL.get(env.ENCODER_POOL.idFromName(`pool-test-${pools++}`));
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
    const pool = newPool();
    expect(await acquire(pool, "busy", "busy-1", 2, 1000)).toEqual(["b0", "b1"]);
    expect(await acquire(pool, "busy", "busy-2", 3, 1001)).toEqual([]);
    expect(await acquire(pool, "other", "other-1", 1, 1002)).toEqual([]);
    // busy holds one after the release, other none: other's video goes first, though it came last.
    expect(await releaseAndSee(pool, "busy-1", "b0", 1003)).toBe("other-1");
  });

  it("projects holding as many take turns: the one granted least recently goes first", async () => {
    const pool = newPool();
    expect(await acquire(pool, "busy", "busy-1", 1, 1000)).toEqual(["b0"]);
    expect(await acquire(pool, "third", "third-1", 1, 1001)).toEqual(["b1"]);
    // busy's second video has waited longer than other's, and both projects hold none once b0 frees.
    expect(await acquire(pool, "busy", "busy-2", 4, 1002)).toEqual([]);
    expect(await acquire(pool, "other", "other-1", 1, 1003)).toEqual([]);
    expect(await releaseAndSee(pool, "busy-1", "b0", 1004)).toBe("other-1");
    // Then busy's turn: other was granted more recently.
    expect(await releaseAndSee(pool, "other-1", "b0", 1005)).toBe("busy-2");
  });

  it("forgets the turns of projects with nothing held or wanted", async () => {
    const pool = newPool();
    expect(await acquire(pool, "once", "once-1", 1, 1000)).toEqual(["b0"]);
    await runInDurableObject(pool, (instance: EncoderPool) => instance.forget("once-1", 1001));
    const turns = await runInDurableObject(pool, (_: EncoderPool, state) =>
      state.storage.sql.exec("SELECT project FROM turns").toArray(),
    );
    expect(turns).toEqual([]);
  });
});

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EncodingStore, type NewUnit } from "../../../src/encoding/pipeline/coordinator-store";
import { coordinatorOf } from "../../../src/encoding/pipeline/coordinator-stub";

/**
 * The coordinator's units as its SQLite holds them (coordinator-store.ts): each kind read back as
 * it was added, through the table's two number columns, and requeued where it should start again.
 * A coordinator of a made-up video lends its storage; nothing runs in it.
 */

let videos = 0;
function withStore<T>(use: (store: EncodingStore) => T): Promise<T> {
  return runInDurableObject(coordinatorOf(env, `store-test-${videos++}`), (_instance, state) =>
    use(new EncodingStore(state.storage.sql)),
  );
}

const STATE = { tries: 0, job: null, slot: null, started: null, heard: null };

/** One unit of each shape: a background run, a viewer's run, a frame, and one that makes one thing. */
const RUN: NewUnit = {
  id: "run-4",
  kind: "segments",
  priority: "background",
  rendition: null,
  from: 4,
  to: 8,
  rank: 4,
};
const LIVE: NewUnit = {
  id: "live-360p-9",
  kind: "segments",
  priority: "interactive",
  rendition: "360p",
  from: 9,
  to: 12,
  rank: 5,
};
const FRAME: NewUnit = { id: "frame-25-320", kind: "frame", priority: "interactive", frame: 25, width: 320, rank: 6 };
const POSTER: NewUnit = { id: "poster", kind: "still", priority: "background", rank: -1 };

describe("the coordinator's store", () => {
  it("reads every kind of unit back as it was added: a run's span, a frame's number and width", async () => {
    const units = await withStore((store) => {
      for (const unit of [RUN, LIVE, FRAME, POSTER]) store.addUnit(unit);
      // A viewer's run covers its own rendition's segments from `from` up to, not including, `to`.
      expect(store.covering("360p", 11).map((unit) => unit.id)).toEqual(["live-360p-9"]);
      expect(store.covering("360p", 12)).toEqual([]);
      expect(store.covering("720p", 9)).toEqual([]);
      return store.units();
    });
    expect(units).toEqual([POSTER, RUN, LIVE, FRAME].map((unit) => ({ ...STATE, ...unit })));
  });

  it("lists the background runs, and requeues a run from where it starts again, any other unit as it was", async () => {
    const after = await withStore((store) => {
      for (const unit of [RUN, FRAME]) store.addUnit(unit);
      expect(store.backgroundRuns().map((run) => [run.from, run.to])).toEqual([[4, 8]]);
      for (const unit of store.units()) store.started(unit.id, `job-${unit.id}`, "slot-1", 1000);
      const [run] = store.backgroundRuns();
      if (!run) throw new Error("no run");
      store.requeueFrom(run, 6, 1);
      store.requeue("frame-25-320", 2);
      return store.units();
    });
    expect(after).toEqual([
      { ...STATE, ...RUN, from: 6, tries: 1 },
      { ...STATE, ...FRAME, tries: 2 },
    ]);
  });
});

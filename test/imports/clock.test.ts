import { describe, expect, it } from "vitest";
import { IMPORT_LIMITS } from "../../src/imports/limits";
import { runImport } from "../../src/imports/run";
import { patternedBytes } from "../fixtures/bytes";
import { api, bearer } from "../helpers";
import {
  expectFailed,
  expectSameBytes,
  fakeOrigin,
  file,
  importOf,
  MiB,
  partsOf,
  rowOf,
  sourceBytes,
  testDeps,
  URL_A,
  virtualClock,
} from "./support";

/**
 * A run ends by its own clock (docs/imports.md, "An import's own clock"), at the real numbers: a
 * 60 s pace of 64 KiB, a 5-minute slice, a 3-minute lease, on a virtual clock.
 */
const REAL = {
  pace: IMPORT_LIMITS.pace,
  sliceMs: IMPORT_LIMITS.sliceMs,
  leaseMs: IMPORT_LIMITS.leaseMs,
};
const SECOND = 1000;
const KiB = 1024;

describe("an import's own clock", () => {
  it("fails an origin that sends its headers and then nothing, 60 s after it asked", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(8 * MiB), { stallAt: 0 }) });
    const { deps } = testDeps(origin.fetch, REAL, { clock });
    expect(await runImport(deps, id)).toEqual({ kind: "failed", reason: "nothing received for 60 s" });
    expect(clock.elapsed()).toBe(60 * SECOND);
    await expectFailed(id, "The import failed: nothing received for 60 s.");
  });

  it("fails an origin that sends a byte a second, 60 s after it asked, however far its part is from full", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    let cancelled = false;
    const trickle = { bytes: 1, everyMs: SECOND, sleep: clock.sleep };
    const onCancel = () => {
      cancelled = true;
    };
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(8 * MiB), { trickle, onCancel }) });
    const { deps } = testDeps(origin.fetch, REAL, { clock });
    expect(await runImport(deps, id)).toEqual({
      kind: "failed",
      reason: "the origin sent less than 64 KiB in 60 s",
    });
    expect(clock.elapsed()).toBe(60 * SECOND);
    expect(cancelled).toBe(true);
    await expectFailed(id, "The import failed: the origin sent less than 64 KiB in 60 s.");
  });

  it("fails an origin that never answers, 60 s after it asked", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    const silent = ((_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new Error("aborted")));
      })) as typeof fetch;
    const { deps } = testDeps(silent, REAL, { clock });
    expect(await runImport(deps, id)).toEqual({ kind: "failed", reason: "nothing received for 60 s" });
    expect(clock.elapsed()).toBe(60 * SECOND);
  });

  it("keeps a slow origin that keeps its pace: the slice ends mid-part, the part begun is kept, and the next run asks for the bytes after it", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    // 96 KiB every 10 s (576 KiB a minute): a 5 MiB part takes 9 minutes, longer than a slice.
    const bytes = patternedBytes(8 * MiB);
    const trickle = { bytes: 96 * KiB, everyMs: 10 * SECOND, sleep: clock.sleep };
    const origin = fakeOrigin({ [URL_A]: file(bytes, { trickle }) });
    const { deps, resume } = testDeps(origin.fetch, REAL, { clock });
    const slice = 30 * 96 * KiB;
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    // Stopped at the first bytes past the slice (5 minutes), holding them as the part begun.
    expect(clock.elapsed()).toBe(5 * 60 * SECOND);
    expect(await partsOf(id)).toEqual([]);
    expect(resume.kept.head?.start).toBe(0);
    expectSameBytes(resume.kept.head?.bytes ?? null, bytes.subarray(0, slice));
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    expect(await partsOf(id)).toEqual([5 * MiB]);
    expect(resume.kept.head?.start).toBe(5 * MiB);
    expectSameBytes(resume.kept.head?.bytes ?? null, bytes.subarray(5 * MiB, 2 * slice));
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${slice}-`, `bytes=${2 * slice}-`]);
    expect((await rowOf(id)).import_failures).toBe(0);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("stores the part begun as the last when the next run finds every byte arrived (416)", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    // Exactly what a slice reads: the run stops before it sees the body end.
    const bytes = patternedBytes(30 * 96 * KiB);
    const trickle = { bytes: 96 * KiB, everyMs: 10 * SECOND, sleep: clock.sleep };
    const origin = fakeOrigin({ [URL_A]: file(bytes, { trickle }) });
    const { deps } = testDeps(origin.fetch, REAL, { clock });
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${bytes.byteLength}-`]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("fails, rather than start again at every run, an origin that cannot resume and takes longer than a run", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    const trickle = { bytes: 96 * KiB, everyMs: 10 * SECOND, sleep: clock.sleep };
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(8 * MiB), { trickle, ranges: false }) });
    const { deps } = testDeps(origin.fetch, REAL, { clock });
    expect(await runImport(deps, id)).toEqual({ kind: "continue" });
    expect((await runImport(deps, id)).kind).toBe("failed");
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${30 * 96 * KiB}-`]);
    await expectFailed(id, "the origin cannot resume a fetch (it ignores Range, or compresses the file)");
  });

  it("renews its lease while a slow origin fills no part, and stops at a renewal when the video was deleted meanwhile", async () => {
    const { key, id } = await importOf();
    const clock = virtualClock();
    // 64 KiB every 30 s: the pace is kept, and a part would take 40 minutes.
    const trickle = { bytes: 64 * KiB, everyMs: 30 * SECOND, sleep: clock.sleep };
    let cancelled = false;
    const onCancel = () => {
      cancelled = true;
    };
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(8 * MiB), { trickle, onCancel }) });
    const { deps } = testDeps(origin.fetch, { ...REAL, sliceMs: 60 * 60 * SECOND }, { clock });
    const startedAt = clock.now();
    const run = runImport(deps, id);
    const leaseAt = async () => Date.parse((await rowOf(id)).import_lease_until ?? "0") - startedAt;
    // Taken for 3 minutes; renewed once two thirds of it have gone, for 3 minutes more.
    await expect.poll(leaseAt, { interval: 5, timeout: 10_000 }).toBe(5 * 60 * SECOND);
    expect(clock.elapsed()).toBeGreaterThanOrEqual(2 * 60 * SECOND);
    const deletedAt = clock.elapsed();
    // The delete reaches no running object here (the run is the test's): the lease alone stops it.
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(await run).toEqual({ kind: "skipped" });
    expect(cancelled).toBe(true);
    expect(clock.elapsed() - deletedAt).toBeLessThanOrEqual(2 * 60 * SECOND + 30 * SECOND);
    expect(await partsOf(id)).toEqual([]);
  });

  it("stops at once when told to (its video deleted): the body is cancelled, nothing more is stored", async () => {
    const { id } = await importOf();
    const clock = virtualClock();
    const stop = new AbortController();
    const trickle = { bytes: 512 * KiB, everyMs: SECOND, sleep: clock.sleep };
    let cancelledAt: number | null = null;
    const onCancel = () => {
      cancelledAt = clock.elapsed();
    };
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(20 * MiB), { trickle, onCancel }) });
    const { deps } = testDeps(origin.fetch, REAL, { clock, signal: stop.signal });
    const run = runImport(deps, id);
    await expect.poll(() => partsOf(id), { interval: 5, timeout: 10_000 }).toEqual([5 * MiB]);
    const stoppedAt = clock.elapsed();
    stop.abort();
    expect(await run).toEqual({ kind: "skipped" });
    expect(cancelledAt).toBe(stoppedAt);
    expect(await partsOf(id)).toEqual([5 * MiB]);
    expect((await rowOf(id)).status).toBe("importing");
  });
});

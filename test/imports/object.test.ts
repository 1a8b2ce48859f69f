import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { consumeImports } from "../../src/imports/consumer";
import type { ImportLimits } from "../../src/imports/limits";
import type { VideoImport } from "../../src/imports/object";
import { importObject } from "../../src/imports/objects";
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
  TEST_LIMITS,
  URL_A,
} from "./support";

/**
 * Where an import runs (docs/imports.md, "Where the fetch runs"): its own Durable Object, started by
 * the imports queue's message, so that no import waits behind another.
 */

/** The video's import object, given the test's origin and limits (as the runtime would keep it). */
async function objectFor(id: string, origin: typeof fetch, limits: Partial<ImportLimits> = {}) {
  const stub = importObject(env, id);
  await runInDurableObject(stub, (instance: VideoImport) => {
    instance.origin = origin;
    instance.limits = { ...TEST_LIMITS, ...limits };
  });
  return stub;
}

async function projectOf(id: string): Promise<string> {
  return (
    (await env.DB.prepare("SELECT project_id FROM videos WHERE id = ?").bind(id).first<string>("project_id")) ?? ""
  );
}

const statusOf = async (id: string) => (await rowOf(id)).status;

describe("an import's object", () => {
  it("is only started by the queue, whose batch ends at once: one project's stalled origin does not hold another's import", async () => {
    const stalled = await importOf("https://slow.example.com/a.mp4");
    const quick = await importOf("https://fast.example.com/b.mp4");
    const bytes = patternedBytes(6 * MiB);
    const origin = fakeOrigin({
      // Headers, then nothing: it fails when its pace's window (3 s here) is over.
      "https://slow.example.com/a.mp4": file(patternedBytes(8 * MiB), { stallAt: 0 }),
      "https://fast.example.com/b.mp4": file(bytes),
    });
    const pace = { windowMs: 3_000, minBytes: 64 * 1024 };
    await objectFor(stalled.id, origin.fetch, { pace });
    await objectFor(quick.id, origin.fetch, { pace });
    const messages = [stalled.id, quick.id].map(async (id, n) => ({
      id: `m${n}`,
      timestamp: new Date(),
      attempts: 1,
      body: { projectId: await projectOf(id), videoId: id },
    }));
    // The stalled import's message first, as in a queue that hands out one batch at a time.
    const batch = createMessageBatch("video-imports", await Promise.all(messages));
    const started = performance.now();
    await consumeImports(batch, env);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await getQueueResult(batch, createExecutionContext())).explicitAcks.sort()).toEqual(["m0", "m1"]);
    await expect.poll(() => statusOf(quick.id), { interval: 50, timeout: 10_000 }).toBe("uploaded");
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await statusOf(stalled.id)).toBe("importing");
    expectSameBytes(await sourceBytes((await rowOf(quick.id)).source_key), bytes);
    // And the stalled one ends by its own clock.
    await expect.poll(() => statusOf(stalled.id), { interval: 50, timeout: 10_000 }).toBe("errored");
    await expectFailed(stalled.id, "nothing received for 3 s");
  });

  it("runs slice after slice, and again after a transient failure, until the file is whole; then forgets it", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    const origin = fakeOrigin({ [URL_A]: file(bytes, { breakAt: { hits: [2], at: 6 * MiB } }) });
    const stub = await objectFor(id, origin.fetch, { partsPerRun: 1 });
    await stub.start({ projectId: await projectOf(id), videoId: id });
    await expect.poll(() => statusOf(id), { interval: 50, timeout: 15_000 }).toBe("uploaded");
    // A slice of one part, a break after it (the next run a second later), then the rest.
    expect(origin.hits.map((hit) => hit.range)).toEqual([
      null,
      `bytes=${5 * MiB}-`,
      `bytes=${5 * MiB}-`,
      `bytes=${10 * MiB}-`,
    ]);
    expect((await rowOf(id)).import_failures).toBe(1);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
    await runInDurableObject(stub, async (_, state) => {
      expect(await state.storage.getAlarm()).toBeNull();
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM import_job").one().n).toBe(0);
    });
  });

  it("stops at once when its video is deleted: the origin's connection is closed and nothing more is stored", async () => {
    const { key, id } = await importOf();
    let cancelled = false;
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    // 64 KiB every 20 ms: its pace kept, and no part filled before the delete (a part would be
    // the other way the run notices it).
    const trickle = { bytes: 64 * 1024, everyMs: 20, sleep };
    const onCancel = () => {
      cancelled = true;
    };
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(40 * MiB), { trickle, onCancel }) });
    const stub = await objectFor(id, origin.fetch);
    await stub.start({ projectId: await projectOf(id), videoId: id });
    await expect.poll(() => origin.hits.length, { interval: 20, timeout: 10_000 }).toBe(1);
    await sleep(200);
    expect(cancelled).toBe(false);
    // The test's deletions queue runs the follow-up before the delete answers (test/setup.ts).
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(cancelled).toBe(true);
    await runInDurableObject(stub, async (_, state) => {
      expect(await state.storage.getAlarm()).toBeNull();
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM import_job").one().n).toBe(0);
    });
    await sleep(200);
    expect(origin.hits).toHaveLength(1);
    expect(await partsOf(id)).toEqual([]);
  });

  it("gives an import up after runs that keep throwing (R2 or D1 down), so none stays importing", async () => {
    const { id } = await importOf();
    // An answer the run cannot read at all: what it throws is no origin's failure, but the run's own.
    const broken = (async () =>
      ({
        status: 200,
        headers: {
          get: () => {
            throw new Error("storage unavailable");
          },
        },
      }) as unknown as Response) as typeof fetch;
    const stub = await objectFor(id, broken, { maxErrors: 2 });
    await stub.start({ projectId: await projectOf(id), videoId: id });
    await expect.poll(() => statusOf(id), { interval: 50, timeout: 10_000 }).toBe("errored");
    await expectFailed(id, "it could not be fetched after many tries");
  });
});

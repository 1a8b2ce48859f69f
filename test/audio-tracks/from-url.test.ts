import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Job } from "../../media-plan/protocol.mjs";
import { consumeDeadImports } from "../../src/imports/consumer";
import { runImport } from "../../src/imports/run";
import { sweepImports } from "../../src/imports/sweeper";
import { isoTime } from "../../src/lib/time";
import type { ImportMessage } from "../../src/queues/imports";
import {
  callback,
  finishAll,
  jobsOf,
  playable,
  probeFacts,
  runEncodes,
  runNewEncodes,
  withFakeEncoder,
} from "../encoding/pipeline/support";
import { patternedBytes } from "../fixtures/bytes";
import { api, bearer, json, newWorkspace } from "../helpers";
import { capturingQueue, expectSameBytes, fakeOrigin, file, MiB, testDeps } from "../imports/support";
import { apiWith } from "../support/app";

/**
 * An audio track put by URL (docs/audio-tracks.md): its file is fetched by the imports' machinery
 * (docs/imports.md), as a video's source is, then made by the video's coordinator.
 */
const encoder = withFakeEncoder();

const URL_FR = "https://media.example.com/dub.fr.m4a";

/** A ready video, its audio tagged English. */
async function readyVideo(key: string) {
  const video = await playable(encoder(), key, probeFacts(10, { audioLanguage: "eng" }));
  await finishAll(encoder(), video.id);
  return video;
}

/** Puts the French track of `videoId` by URL; the import's message kept (no consumer runs it). */
async function putByUrl(key: string, videoId: string, url = URL_FR) {
  const { sent, queue } = capturingQueue<ImportMessage>();
  const response = await apiWith(
    { IMPORT_QUEUE: queue },
    `/v1/videos/${videoId}/audio-tracks/fr`,
    bearer(key, json("PUT", { sourceUrl: url })),
  );
  return { response, sent };
}

async function trackRow(videoId: string) {
  return env.DB.prepare("SELECT * FROM audio_tracks WHERE video_id = ? AND language = 'fr'").bind(videoId).first<{
    generation: string;
    status: string;
    import_url: string | null;
    error_code: string | null;
    error_message: string | null;
  }>();
}

async function partsOf(generation: string): Promise<number> {
  return (
    (await env.DB.prepare("SELECT count(*) AS n FROM upload_parts WHERE video_id = ?")
      .bind(generation)
      .first<number>("n")) ?? -1
  );
}

describe("an audio track put by URL", () => {
  it("is fetched by the imports' machinery, in parts, then made of the fetched file", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key);
    const { response, sent } = await putByUrl(key, id);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ language: "fr", label: "French", status: "processing", default: false });
    const { generation, import_url } = (await trackRow(id)) ?? { generation: "", import_url: null };
    expect(import_url).toBe(URL_FR);
    expect(sent).toEqual([{ projectId, videoId: id, track: { language: "fr", generation } }]);
    // Nothing is made while the file is fetched.
    await runNewEncodes(id);
    expect(jobsOf(encoder(), id, "audio")).toEqual([]);

    // Larger than a part (5 MiB in these tests): two parts, assembled.
    const bytes = patternedBytes(6 * MiB);
    const origin = fakeOrigin({ [URL_FR]: file(bytes) });
    const { deps, encodes } = testDeps(origin.fetch);
    expect(await runImport(deps, id, { language: "fr", generation })).toEqual({ kind: "uploaded" });
    expect(await trackRow(id)).toMatchObject({ status: "processing", import_url: null });
    expect(await partsOf(generation)).toBe(0);
    // The fetched file is the track's file: the coordinator is asked, and its jobs read it.
    expect(encodes).toEqual([{ projectId, videoId: id, audio: { language: "fr", generation } }]);
    await runEncodes(encodes);
    const [job] = jobsOf(encoder(), id, "audio");
    const source = await callback(job as Job, "source");
    expectSameBytes(new Uint8Array(await source.arrayBuffer()), bytes);
    await finishAll(encoder(), id);
    expect((await trackRow(id))?.status).toBe("ready");
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).toContain('LANGUAGE="fr"');
  });

  it("errors the track import_failed, in the imports' words, when its file cannot be fetched", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    await putByUrl(key, id);
    const { generation } = (await trackRow(id)) ?? { generation: "" };
    const { deps, encodes } = testDeps(fakeOrigin({}).fetch);
    expect((await runImport(deps, id, { language: "fr", generation })).kind).toBe("failed");
    expect(await trackRow(id)).toMatchObject({
      status: "errored",
      error_code: "import_failed",
      error_message: "The import failed: the origin answered 404 Not Found.",
    });
    expect(encodes).toEqual([]);
    const listed = await api(`/v1/videos/${id}/audio-tracks`, bearer(key));
    expect(((await listed.json()) as { data: unknown[] }).data[1]).toMatchObject({
      status: "errored",
      error: { code: "import_failed" },
    });
  });

  it("stops fetching a track put again or deleted: no run takes its lease, and its parts and upload go", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    await putByUrl(key, id);
    const older = (await trackRow(id))?.generation ?? "";
    // A run stores the first part, then stops at its part limit, the rest to come.
    const origin = fakeOrigin({ [URL_FR]: file(patternedBytes(11 * MiB)) });
    const first = testDeps(origin.fetch, { partsPerRun: 1 });
    expect((await runImport(first.deps, id, { language: "fr", generation: older })).kind).toBe("continue");
    expect(await partsOf(older)).toBe(1);
    // Put again from a file's bytes: the older fetch is let go.
    const put = await api(
      `/v1/videos/${id}/audio-tracks/fr`,
      bearer(key, { method: "PUT", body: "a file", headers: { "content-type": "audio/mp4", "content-length": "6" } }),
    );
    expect(put.status).toBe(202);
    expect(await partsOf(older)).toBe(0);
    const again = testDeps(origin.fetch);
    expect(await runImport(again.deps, id, { language: "fr", generation: older })).toEqual({ kind: "skipped" });
    expect(origin.hits).toHaveLength(1);
  });

  it("is sent again by the sweep when no run works on it, and given up by the dead-letter queue", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key);
    await putByUrl(key, id);
    const { generation } = (await trackRow(id)) ?? { generation: "" };
    await env.DB.prepare("UPDATE audio_tracks SET updated_at = ? WHERE generation = ?")
      .bind(isoTime(Date.now() - 10 * 60_000), generation)
      .run();
    const { sent, queue } = capturingQueue<ImportMessage>();
    await sweepImports({ db: env.DB, queue });
    const message = { projectId, videoId: id, track: { language: "fr", generation } };
    expect(sent).toContainEqual(message);
    const batch = createMessageBatch("video-imports-dlq", [
      { id: "dead-1", timestamp: new Date(), attempts: 10, body: message },
    ]);
    await consumeDeadImports(batch, env);
    expect(await trackRow(id)).toMatchObject({
      status: "errored",
      error_code: "import_failed",
      error_message: "The import failed: it could not be fetched after many tries.",
    });
  });
});

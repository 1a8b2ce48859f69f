import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { segmentCount } from "../../media-plan/plan.mjs";
import { type Job, segmentName } from "../../media-plan/protocol.mjs";
import { consumeDeadEncodes } from "../../src/encoding/pipeline/queue";
import { planOf, type VideoRow } from "../../src/videos/model";
import {
  audioSegmentBytes,
  callback,
  encodeMessages,
  failWith,
  finishAll,
  finishAudio,
  jobsOf,
  playable,
  probeFacts,
  putAudioSegment,
  runNewEncodes,
  withFakeEncoder,
} from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newWorkspace } from "../helpers";

/**
 * Audio in other languages (docs/audio-tracks.md): the routes, and the video's coordinator making a
 * track on the fake encoder, a run of segments at a time, until it plays in the master playlist.
 */
const encoder = withFakeEncoder();

type AudioJob = Extract<Job, { kind: "audio" }>;

/** A file standing for the track's bytes (the fake encoder never reads it; the callback serves it). */
const FILE = new TextEncoder().encode("an audio file, as a dubbing studio sends it");

function putTrack(key: string, videoId: string, language: string, init: RequestInit = {}, query = "") {
  return api(
    `/v1/videos/${videoId}/audio-tracks/${language}${query}`,
    bearer(key, { method: "PUT", body: FILE, headers: { "content-type": "audio/mp4" }, ...init }),
  );
}

async function trackList(key: string, videoId: string) {
  const response = await api(`/v1/videos/${videoId}/audio-tracks`, bearer(key));
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Record<string, unknown>[] }).data;
}

/** A video made ready by the fake encoder, `facts` its probe's: 70 s, its audio tagged English, by default. */
async function readyVideo(key: string, facts = probeFacts(70, { audioLanguage: "eng" })) {
  const video = await playable(encoder(), key, facts);
  await finishAll(encoder(), video.id);
  return video;
}

async function videoRow(id: string): Promise<VideoRow> {
  return (await env.DB.prepare("SELECT * FROM videos WHERE id = ?").bind(id).first<VideoRow>()) as VideoRow;
}

async function generationOf(videoId: string, language: string): Promise<string> {
  const row = await env.DB.prepare("SELECT generation FROM audio_tracks WHERE video_id = ? AND language = ?")
    .bind(videoId, language)
    .first<{ generation: string }>();
  return row?.generation ?? "";
}

async function objects(projectId: string, videoId: string, generation: string): Promise<string[]> {
  const listed = await env.MEDIA.list({ prefix: `videos/${projectId}/${videoId}/audio/${generation}/` });
  return listed.objects.map((object) => object.key.split("/").at(-1) ?? "");
}

/** The audio jobs the encoder got for the video. */
function audioJobs(videoId: string): AudioJob[] {
  return jobsOf(encoder(), videoId, "audio") as AudioJob[];
}

/** The audio jobs of the video that run now (started, not answered). */
function runningAudio(videoId: string): AudioJob[] {
  return audioJobs(videoId).filter((job) => encoder().running.has(job.jobId));
}

describe("PUT /v1/videos/{id}/audio-tracks/{language}", () => {
  it("makes a track of the file in runs of segments, in the background, and plays it beside the original", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key);
    const put = await putTrack(key, id, "FR");
    expect(put.status).toBe(202);
    expect(await put.json()).toEqual({ language: "fr", label: "French", status: "processing", default: false });
    expect(await trackList(key, id)).toEqual([
      { language: "en", label: "Original", status: "ready", default: true },
      { language: "fr", label: "French", status: "processing", default: false },
    ]);
    // Not played while it is made.
    const before = await (await api(`/play/${id}/master.m3u8`)).text();
    expect(before).not.toContain("TYPE=AUDIO");

    await runNewEncodes(id);
    const plan = planOf(await videoRow(id));
    const count = segmentCount(plan ?? (undefined as never));
    expect(count).toBe(18);
    // The job reads the track's own file, not the video's source.
    const [first] = audioJobs(id);
    expect(first).toMatchObject({ kind: "audio", priority: "background", from: 0, to: 15 });
    const source = await callback(first as AudioJob, "source");
    expect(new Uint8Array(await source.arrayBuffer())).toEqual(FILE);
    await finishAll(encoder(), id);
    expect(audioJobs(id).map((job) => [job.from, job.to])).toEqual([
      [0, 15],
      [15, 18],
    ]);
    expect(await trackList(key, id)).toMatchObject([{ language: "en" }, { language: "fr", status: "ready" }]);

    const generation = await generationOf(id, "fr");
    const master = await (await api(`/play/${id}/master.m3u8`)).text();
    const lines = master.trimEnd().split("\n");
    expect(lines.filter((line) => line.startsWith("#EXT-X-MEDIA"))).toEqual([
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Original",LANGUAGE="en",AUTOSELECT=YES,DEFAULT=YES',
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="French",LANGUAGE="fr",AUTOSELECT=YES,DEFAULT=NO,URI="audio/${generation}/index.m3u8"`,
    ]);
    const variants = lines.filter((line) => line.startsWith("#EXT-X-STREAM-INF"));
    expect(variants.length).toBeGreaterThan(0);
    for (const variant of variants) expect(variant).toMatch(/,AUDIO="audio"$/);
    expect(before.split("\n").find((line) => line.startsWith("#EXT-X-STREAM-INF"))).toBe(
      variants[0]
        ?.replace(/BANDWIDTH=(\d+)/, (_, b) => `BANDWIDTH=${Number(b) - 140_800}`)
        .replace(',AUDIO="audio"', ""),
    );

    // The track's playlist is the video's: as many segments, each as long.
    const playlist = await (await api(`/play/${id}/audio/${generation}/index.m3u8`)).text();
    const variant = await (await api(`/play/${id}/360p/index.m3u8`)).text();
    expect(playlist).toBe(variant);
    const segment = await api(`/play/${id}/audio/${generation}/${segmentName(4)}`);
    expect(segment.status).toBe(200);
    expect(segment.headers.get("content-type")).toBe("video/mp2t");
    expect(new Uint8Array(await segment.arrayBuffer())).toEqual(audioSegmentBytes(4, (first as AudioJob).jobId));
    // A clip's range cuts the track's playlist as it cuts the variants'.
    const clip = await (await api(`/play/${id}/master.m3u8?start=10&end=30`)).text();
    expect(clip).toContain(`URI="audio/${generation}/index.m3u8?start=10&end=30"`);
    const clipped = await (await api(`/play/${id}/audio/${generation}/index.m3u8?start=10&end=30`)).text();
    expect(clipped).toBe(await (await api(`/play/${id}/360p/index.m3u8?start=10&end=30`)).text());
    expect(clipped).toContain("#EXT-X-MEDIA-SEQUENCE:2");
    // A token bound to a range: the track's playlist is cut to it, and no segment outside it plays.
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", { start: 10, end: 30 })));
    const { token } = (await minted.json()) as { token: string };
    expect(await (await api(`/play/${token}/master.m3u8`)).text()).toContain(
      `URI="audio/${generation}/index.m3u8?start=10&end=30"`,
    );
    expect(await (await api(`/play/${token}/audio/${generation}/index.m3u8`)).text()).toBe(clipped);
    expect((await api(`/play/${token}/audio/${generation}/${segmentName(4)}`)).status).toBe(200);
    for (const outside of [1, 8]) {
      expect((await api(`/play/${token}/audio/${generation}/${segmentName(outside)}`)).status).toBe(404);
    }
    // The embed page offers the choice, with the player that plays alternate audio.
    const page = await (await api(`/embed/${id}`)).text();
    expect(page).toContain("<media-audio-track-menu");
    expect(page).toContain('<script src="/vendor/player/player-audio.js"></script>');
    // Its objects: the file as sent, and every segment.
    expect((await objects(projectId, id, generation)).sort()).toEqual(
      ["source", ...Array.from({ length: count }, (_, i) => segmentName(i))].sort(),
    );
  });

  it("gives the original `und` when its stream names no language; a silent video has no original", async () => {
    const { key } = await newWorkspace();
    const untagged = await readyVideo(key, probeFacts(10));
    expect(await trackList(key, untagged.id)).toEqual([
      { language: "und", label: "Original", status: "ready", default: true },
    ]);
    expect(await errorCode(await putTrack(key, untagged.id, "und"))).toBe("original_audio");

    const silent = await readyVideo(key, probeFacts(10, { audioStream: null }));
    expect(await trackList(key, silent.id)).toEqual([]);
    expect((await putTrack(key, silent.id, "de", {}, "?label=Deutsch")).status).toBe(202);
    await runNewEncodes(silent.id);
    await finishAll(encoder(), silent.id);
    expect(await trackList(key, silent.id)).toEqual([
      { language: "de", label: "Deutsch", status: "ready", default: false },
    ]);
    const master = await (await api(`/play/${silent.id}/master.m3u8`)).text();
    expect(master.split("\n").filter((line) => line.startsWith("#EXT-X-MEDIA"))).toEqual([
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Deutsch",LANGUAGE="de",AUTOSELECT=YES,DEFAULT=NO,URI="audio/${await generationOf(silent.id, "de")}/index.m3u8"`,
    ]);
    // The variants now carry AAC, from the track.
    expect(master).toMatch(/CODECS="avc1\.6400[0-9a-f]{2},mp4a\.40\.2"/);
    // One track: nothing to choose, but the page's player must play it.
    const page = await (await api(`/embed/${silent.id}`)).text();
    expect(page).not.toContain("<media-audio-track-menu");
    expect(page).toContain("player-audio.js");
  });

  it("refuses with the documented codes, before reading the file", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    const processing = await playable(encoder(), key, probeFacts(10));
    const cases: [Promise<Response>, number, string][] = [
      [putTrack(key, "01J00000000000000000000000", "fr"), 404, "video_not_found"],
      [putTrack(key, "not-an-id", "fr"), 404, "video_not_found"],
      [putTrack(key, processing.id, "fr"), 409, "video_not_ready"],
      [putTrack(key, id, "en"), 409, "original_audio"],
      [putTrack(key, id, "EN"), 409, "original_audio"],
      [putTrack(key, id, "not_a_tag"), 400, "invalid_body"],
      [putTrack(key, id, "fr", {}, '?label=say%20"hi"'), 400, "invalid_query"],
      [putTrack(key, id, "fr", {}, "?label=%ED%A0%80"), 400, "invalid_query"],
      [putTrack(key, id, "fr", { body: new Uint8Array(0) }), 400, "invalid_body"],
      [
        api(`/v1/videos/${id}/audio-tracks/fr`, bearer(key, json("PUT", { sourceUrl: "x", other: 1 }))),
        400,
        "invalid_body",
      ],
      [api(`/v1/videos/${id}/audio-tracks/fr`, bearer(key, json("PUT", "{not json"))), 400, "invalid_body"],
    ];
    for (const [response, status, code] of cases) {
      const answer = await response;
      expect([answer.status, await errorCode(answer)]).toEqual([status, code]);
    }
    const refused = await api(
      `/v1/videos/${id}/audio-tracks/fr`,
      bearer(key, json("PUT", { sourceUrl: "https://169.254.169.254/track.m4a" })),
    );
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { details: { path: string }[] } }).error.details).toMatchObject([
      { path: "sourceUrl" },
    ]);
    // More than 100 MB, by its declared length: refused unread.
    const big = new ReadableStream({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const tooLarge = await api(
      `/v1/videos/${id}/audio-tracks/fr`,
      bearer(key, {
        method: "PUT",
        body: big,
        headers: { "content-type": "audio/wav", "content-length": "100000001" },
        duplex: "half",
      } as RequestInit),
    );
    expect([tooLarge.status, await errorCode(tooLarge)]).toEqual([413, "payload_too_large"]);
    expect(await trackList(key, id)).toHaveLength(1);
  });

  it("holds at most 10 tracks, the original counted; a language it has is replaced, not added", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    for (const language of ["fr", "de", "es", "it", "pt", "nl", "sv", "ja", "ko"]) {
      expect((await putTrack(key, id, language)).status).toBe(202);
    }
    const eleventh = await putTrack(key, id, "zh");
    expect([eleventh.status, await errorCode(eleventh)]).toEqual([409, "quota_exceeded"]);
    expect((await putTrack(key, id, "fr", {}, "?label=Fran%C3%A7ais")).status).toBe(202);
    expect(await trackList(key, id)).toHaveLength(10);
    expect((await trackList(key, id)).find((track) => track.language === "fr")).toMatchObject({ label: "Français" });
  });

  it("replaces a track put again: the older one's jobs stop and its objects go, and its URLs never serve the new bytes", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    const older = await generationOf(id, "fr");
    await runNewEncodes(id);
    const [job] = runningAudio(id);
    expect((await putAudioSegment(job as AudioJob, 0)).status).toBe(204);
    expect(await objects(projectId, id, older)).toEqual(["seg_00000.ts", "source"]);

    expect((await putTrack(key, id, "fr")).status).toBe(202);
    const newer = await generationOf(id, "fr");
    expect(newer).not.toBe(older);
    await runNewEncodes(id);
    // The older job was stopped, what it stored went, and what it still sends is refused.
    expect(encoder().cancelled).toContain(job?.jobId);
    expect(await objects(projectId, id, older)).toEqual([]);
    expect((await putAudioSegment(job as AudioJob, 1)).status).toBe(410);
    expect(await objects(projectId, id, older)).toEqual([]);
    const [next] = runningAudio(id);
    expect((await callback(next as AudioJob, "source")).status).toBe(200);
    await finishAudio(next as AudioJob);
    expect(await trackList(key, id)).toMatchObject([{ language: "en" }, { language: "fr", status: "ready" }]);
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).toContain(`URI="audio/${newer}/index.m3u8"`);
    expect((await api(`/play/${id}/audio/${older}/index.m3u8`)).status).toBe(404);
  });

  it("errors a track whose file has no audio at once (invalid_source), and one whose runs fail three times (encoding_failed)", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key, probeFacts(70, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    await putTrack(key, id, "de");
    await runNewEncodes(id);
    const french = runningAudio(id).find((job) => job.callback.baseUrl.includes("audio-fr"));
    const message = "The file is not a decodable audio track: the file has no audio stream.";
    expect((await failWith(french as AudioJob, "invalid_source", message)).status).toBe(204);
    expect(await trackList(key, id)).toMatchObject([
      { language: "en" },
      { language: "de", status: "processing" },
      { language: "fr", status: "errored", error: { code: "invalid_source", message } },
    ]);
    // The same run of the German track fails three times (its first: 0 to 15).
    for (let attempt = 0; attempt < 3; attempt++) {
      const german = runningAudio(id).find((job) => job.jobId.includes("-audio-de-0-")) as AudioJob;
      encoder().running.delete(german.jobId);
      expect((await failWith(german, "encoding_failed")).status).toBe(204);
    }
    expect((await trackList(key, id))[1]).toMatchObject({
      language: "de",
      status: "errored",
      error: { code: "encoding_failed", message: "The audio track could not be made: 3 attempts failed." },
    });
    expect(runningAudio(id)).toEqual([]);
    const video = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { status: string };
    expect(video.status).toBe("ready");
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).not.toContain("TYPE=AUDIO");
  });

  it("errors a track whose message to the coordinator gave up (the dead-letter queue)", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    const generation = await generationOf(id, "fr");
    const batch = createMessageBatch("video-encodings-dlq", [
      {
        id: "dead-1",
        timestamp: new Date(),
        attempts: 10,
        body: { projectId, videoId: id, audio: { language: "fr", generation } },
      },
    ]);
    await consumeDeadEncodes(batch, env);
    expect((await trackList(key, id))[1]).toMatchObject({
      status: "errored",
      error: { code: "encoding_failed", message: "The audio track could not be made: its work could not be started." },
    });
  });
});

describe("DELETE /v1/videos/{id}/audio-tracks/{language}", () => {
  it("takes the track out of the master at once and removes its objects; the original cannot go", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    await runNewEncodes(id);
    await finishAll(encoder(), id);
    const generation = await generationOf(id, "fr");
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).toContain("TYPE=AUDIO");
    const removed = await api(`/v1/videos/${id}/audio-tracks/FR`, bearer(key, { method: "DELETE" }));
    expect(removed.status).toBe(204);
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).not.toContain("TYPE=AUDIO");
    expect((await api(`/play/${id}/audio/${generation}/${segmentName(0)}`)).status).toBe(404);
    expect(await objects(projectId, id, generation)).toEqual([]);
    expect(await trackList(key, id)).toEqual([{ language: "en", label: "Original", status: "ready", default: true }]);
    const cases: [string, string, number, string][] = [
      [id, "fr", 404, "audio_track_not_found"],
      [id, "not_a_tag", 404, "audio_track_not_found"],
      [id, "en", 409, "original_audio"],
      ["01J00000000000000000000000", "fr", 404, "video_not_found"],
    ];
    for (const [video, language, status, code] of cases) {
      const answer = await api(`/v1/videos/${video}/audio-tracks/${language}`, bearer(key, { method: "DELETE" }));
      expect([answer.status, await errorCode(answer)]).toEqual([status, code]);
    }
  });

  it("stops a track being made: its jobs end, and what they send after is refused", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    const generation = await generationOf(id, "fr");
    await runNewEncodes(id);
    const [job] = runningAudio(id);
    expect((await api(`/v1/videos/${id}/audio-tracks/fr`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    await runNewEncodes(id);
    expect(encoder().cancelled).toContain(job?.jobId);
    expect((await putAudioSegment(job as AudioJob, 0)).status).toBe(410);
    expect(await objects(projectId, id, generation)).toEqual([]);
    const told = encodeMessages().filter((message) => message.videoId === id && "audio" in message);
    expect(told).toHaveLength(2);
  });
});

describe("a deleted video", () => {
  it("stops its tracks being made, and its clean-up removes their objects and rows", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key, probeFacts(10, { audioLanguage: "eng" }));
    await putTrack(key, id, "fr");
    await runNewEncodes(id);
    const [job] = runningAudio(id);
    // The delete's follow-up (the deletions queue) runs as it is sent, in these tests.
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(encoder().cancelled).toContain(job?.jobId);
    expect((await putAudioSegment(job as AudioJob, 0)).status).toBe(410);
    expect((await env.MEDIA.list({ prefix: `videos/${projectId}/${id}/` })).objects).toEqual([]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM audio_tracks WHERE video_id = ?").bind(id).first("n");
    expect(rows).toBe(0);
  });
});

describe("the original's language", () => {
  it("is kept from the probe when the video becomes playable, as BCP 47", async () => {
    const { key } = await newWorkspace();
    for (const [code, language] of [
      ["fre", "fr"],
      ["deu", "de"],
      ["jpn", "ja"],
      ["haw", "haw"],
    ]) {
      const { id } = await playable(encoder(), key, probeFacts(10, { audioLanguage: code }));
      expect((await videoRow(id)).audio_language).toBe(language);
      // Its jobs end, so the next video's probe finds an encoder slot.
      await finishAll(encoder(), id);
    }
    // An older encoder says nothing: `und`.
    const { id } = await playable(encoder(), key, probeFacts(10));
    expect((await videoRow(id)).audio_language).toBeNull();
    expect(await trackList(key, id)).toEqual([{ language: "und", label: "Original", status: "ready", default: true }]);
    vi.restoreAllMocks();
  });
});

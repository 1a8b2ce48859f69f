import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { Job, Word } from "../../media-plan/protocol.mjs";
import type { CaptionsEvent } from "../../src/captions/events";
import { parseWebVtt } from "../../src/captions/webvtt";
import { coordinatorOf } from "../../src/encoding/pipeline/coordinator-stub";
import { NO_ENGINE_MESSAGE } from "../../src/speech/engine";
import {
  callback,
  captionMessages,
  encodeMessages,
  failWith,
  finishAll,
  heardWords,
  jobsOf,
  playable,
  probeFacts,
  result,
  runEncodes,
  runNewCaptions,
  runNewEncodes,
  withFakeEncoder,
} from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newVideo, newWorkspace } from "../helpers";

/**
 * Generated caption tracks (docs/generated-captions.md): asked for by the route or at creation,
 * heard chunk by chunk by the video's coordinator on the fake encoder's engine (or by Workers AI
 * through the callback route), made into a track by the caption-generations queue's consumer.
 */
const encoder = withFakeEncoder();

type SpeechJob = Extract<Job, { kind: "speech" }>;

function generate(key: string, videoId: string, language = "en", init: RequestInit = { method: "POST" }) {
  return api(`/v1/videos/${videoId}/captions/${language}/generate`, bearer(key, init));
}

async function tracks(key: string, videoId: string) {
  const response = await api(`/v1/videos/${videoId}/captions`, bearer(key));
  return ((await response.json()) as { data: Record<string, unknown>[] }).data;
}

/** The speech jobs the encoder got for the video (of `language`, in the engine's code). */
function speechJobs(videoId: string): SpeechJob[] {
  return jobsOf(encoder(), videoId, "speech") as SpeechJob[];
}

/** A video made ready by the fake encoder, `facts` its probe's. */
async function readyVideo(key: string, facts = probeFacts(10)) {
  const video = await playable(encoder(), key, facts);
  await finishAll(encoder(), video.id);
  return video;
}

/** Runs the queues until the video's speech jobs have been started. */
async function speechStarted(videoId: string) {
  await runNewEncodes(videoId);
  return speechJobs(videoId);
}

/** The encoder's part of every speech job started and not answered: the words `heard` gives for its span. */
async function hearAll(videoId: string, heard: (job: SpeechJob) => Word[]) {
  for (let round = 0; round < 50; round++) {
    const next = speechJobs(videoId).find((job) => encoder().running.has(job.jobId));
    if (!next) break;
    encoder().running.delete(next.jobId);
    expect((await heardWords(next, heard(next))).status).toBe(204);
  }
  await runNewCaptions(videoId);
}

/** Words said in `span` of a job, from a script of words with their times. */
function wordsIn(script: Word[]) {
  return (job: SpeechJob) =>
    script.filter((word) => (word.start + word.end) / 2 >= job.from && (word.start + word.end) / 2 < job.to);
}

const SCRIPT: Word[] = [
  ...["Welcome", "to", "the", "video", "hosting", "service."].map((text, i) => ({
    text,
    start: 1 + i * 0.4,
    end: 1.3 + i * 0.4,
  })),
  ...["Thank", "you", "for", "watching."].map((text, i) => ({ text, start: 42 + i * 0.4, end: 42.3 + i * 0.4 })),
];

/** The outbox's caption events of the video. */
async function captionEvents(videoId: string): Promise<CaptionsEvent[]> {
  const { results } = await env.DB.prepare(
    "SELECT payload FROM outbox_events WHERE subject_id = ? AND type LIKE 'video.captions.%' ORDER BY id",
  )
    .bind(videoId)
    .all<{ payload: string }>();
  return results.map((row) => JSON.parse(row.payload) as CaptionsEvent);
}

describe("POST /v1/videos/{id}/captions/{language}/generate", () => {
  it("hears the speech chunk by chunk in the background, and makes a ready track of it with its event", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await playable(encoder(), key, probeFacts(70));
    const asked = await generate(key, id);
    expect(asked.status).toBe(202);
    expect(await asked.json()).toEqual({
      language: "en",
      label: "English (auto-generated)",
      source: "generated",
      status: "processing",
      url: `http://api.test/play/${id}/captions/en.vtt`,
    });
    // Not played while it is made: no SUBTITLES group, its file 404.
    expect((await api(`/play/${id}/captions/en.vtt`)).status).toBe(404);
    await speechStarted(id);
    // The video's background slots: its segments first, then the speech's chunks, a job each.
    await finishAll(encoder(), id, { words: wordsIn(SCRIPT) });
    await hearAll(id, wordsIn(SCRIPT));
    expect(speechJobs(id).map((job) => [job.from, job.to, job.priority, job.language, job.recognizer])).toEqual([
      [0, 30, "background", "en", "encoder"],
      [30, 60, "background", "en", "encoder"],
      [60, 70, "background", "en", "encoder"],
    ]);
    const [track] = await tracks(key, id);
    expect(track).toMatchObject({ language: "en", source: "generated", status: "ready" });
    const vtt = await (await api(`/play/${id}/captions/en.vtt`)).text();
    const parsed = parseWebVtt(vtt);
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(parsed.cues.map((cue) => [cue.start, cue.text])).toEqual([
      [1000, "Welcome to the video hosting service."],
      [42000, "Thank you for watching."],
    ]);
    const master = await (await api(`/play/${id}/master.m3u8`)).text();
    expect(master).toContain('NAME="English (auto-generated)",LANGUAGE="en"');
    const [event] = await captionEvents(id);
    expect(event).toMatchObject({
      type: "video.captions.ready",
      data: { id, projectId, track: { language: "en", status: "ready", source: "generated" } },
    });
    // The words heard went once the track was made of them.
    expect((await env.MEDIA.list({ prefix: `videos/${projectId}/${id}/speech/` })).objects).toEqual([]);
  });

  it("skips a video without audio, and a video in which no speech was heard; neither has an event", async () => {
    const { key } = await newWorkspace();
    const silent = await readyVideo(key, probeFacts(20, { audioStream: null }));
    expect((await generate(key, silent.id)).status).toBe(202);
    await runNewEncodes(silent.id);
    expect(speechJobs(silent.id)).toEqual([]);
    await runNewCaptions(silent.id);
    expect(await tracks(key, silent.id)).toMatchObject([{ status: "skipped" }]);

    const quiet = await readyVideo(key, probeFacts(20));
    expect((await generate(key, quiet.id)).status).toBe(202);
    await speechStarted(quiet.id);
    await hearAll(quiet.id, () => []);
    expect(await tracks(key, quiet.id)).toMatchObject([{ status: "skipped" }]);
    expect((await api(`/play/${quiet.id}/captions/en.vtt`)).status).toBe(404);
    expect(await captionEvents(silent.id)).toEqual([]);
    expect(await captionEvents(quiet.id)).toEqual([]);
  });

  it("errors the track (not the video) when a chunk cannot be heard after three tries, with its event", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    await generate(key, id);
    await runNewEncodes(id);
    for (let attempt = 0; attempt < 3; attempt++) {
      const job = speechJobs(id).find((one) => encoder().running.has(one.jobId)) as SpeechJob;
      encoder().running.delete(job.jobId);
      expect((await failWith(job, "encoding_failed")).status).toBe(204);
    }
    await runNewCaptions(id);
    const [track] = await tracks(key, id);
    expect(track).toMatchObject({
      status: "errored",
      error: { code: "transcription_failed", message: "The speech could not be heard: 3 attempts failed." },
    });
    expect((await captionEvents(id)).map((event) => event.type)).toEqual(["video.captions.errored"]);
    const video = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { status: string };
    expect(video.status).toBe("ready");
  });

  it("replaces a generated track asked for again: what the older request heard is let go", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    await generate(key, id);
    const [older] = await speechStarted(id);
    const again = await generate(key, id, "en", json("POST", { label: "English (CC)" }));
    expect(await again.json()).toMatchObject({ label: "English (CC)", status: "processing" });
    await runNewEncodes(id);
    // The older job was stopped; its words are refused as from a job that is over.
    expect(encoder().cancelled).toContain(older?.jobId);
    expect((await heardWords(older as SpeechJob, [{ text: "old", start: 1, end: 2 }])).status).toBe(410);
    await hearAll(id, () => [{ text: "new", start: 1, end: 2 }]);
    expect(await tracks(key, id)).toMatchObject([{ label: "English (CC)", status: "ready" }]);
    expect(await (await api(`/play/${id}/captions/en.vtt`)).text()).toContain("new");
  });

  it("is replaced by an upload: PUT over a generated track makes it an uploaded, ready track", async () => {
    const { key } = await newWorkspace();
    const { id } = await readyVideo(key);
    await generate(key, id);
    const put = await api(
      `/v1/videos/${id}/captions/en`,
      bearer(key, {
        method: "PUT",
        body: "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nFixed\n",
        headers: { "content-type": "text/vtt" },
      }),
    );
    expect(await put.json()).toMatchObject({ source: "upload", status: "ready" });
    await speechStarted(id);
    await hearAll(id, () => [{ text: "heard", start: 1, end: 2 }]);
    // The generation's result changed nothing: the upload stays.
    expect(await tracks(key, id)).toMatchObject([{ source: "upload", status: "ready" }]);
    expect(await (await api(`/play/${id}/captions/en.vtt`)).text()).toContain("Fixed");
    // And now generating it again is refused until the upload is deleted.
    expect(await errorCode(await generate(key, id))).toBe("captions_exist");
  });

  it("refuses with the documented codes", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const { id } = await playable(encoder(), key, probeFacts(10));
    const cases: [Promise<Response>, number, string][] = [
      [generate(key, "01J00000000000000000000000"), 404, "video_not_found"],
      [generate(key, id, "not a tag!"), 400, "language_not_supported"],
      [generate(key, id, "fr"), 400, "language_not_supported"],
      [generate(key, video.id as string), 409, "video_not_ready"],
      [generate(key, id, "en", json("POST", { label: "x", other: 1 })), 400, "invalid_body"],
      [generate(key, id, "en", json("POST", { label: 'say "hi"' })), 400, "invalid_body"],
      [
        generate(key, id, "en", { method: "POST", body: "{}", headers: { "content-type": "text/plain" } }),
        400,
        "invalid_body",
      ],
    ];
    for (const [response, status, code] of cases) {
      const answer = await response;
      expect([answer.status, await errorCode(answer)]).toEqual([status, code]);
    }
    const french = await generate(key, id, "fr");
    expect(((await french.json()) as { error: { message: string } }).error.message).toContain("hears en");
    encoder().speech = null;
    const unavailable = await generate(key, id);
    expect(unavailable.status).toBe(503);
    const body = (await unavailable.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "transcription_unavailable", message: NO_ENGINE_MESSAGE });
    expect(body.error.message).toContain("apt-get install -y pocketsphinx pocketsphinx-en-us");
  });

  it("counts generated tracks toward the 20-track limit", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(10));
    expect((await generate(key, id, "en")).status).toBe(202);
    for (let i = 0; i < 19; i++) {
      const language = `x-lang${String(i).padStart(2, "0")}`;
      const put = await api(
        `/v1/videos/${id}/captions/${language}`,
        bearer(key, { method: "PUT", body: "WEBVTT\n", headers: { "content-type": "text/vtt" } }),
      );
      expect(put.status).toBe(200);
    }
    expect(await errorCode(await generate(key, id, "en-GB"))).toBe("quota_exceeded");
    // Asking again for the language it has replaces it: no new track.
    expect((await generate(key, id, "en")).status).toBe(202);
  });

  it("hears a test video's first 10 seconds only", async () => {
    const { key } = await newWorkspace({ mode: "test" });
    const { id } = await readyVideo(key, probeFacts(120));
    await generate(key, id);
    expect((await speechStarted(id)).map((job) => [job.from, job.to])).toEqual([[0, 10]]);
  });
});

describe("generatedCaptions on POST /v1/videos", () => {
  it("asks for each language once the video is playable, as the route would then", async () => {
    const { key } = await newWorkspace();
    const created = await api(
      "/v1/videos",
      bearer(key, json("POST", { title: "Talk", generatedCaptions: ["en", "EN-gb"] })),
    );
    expect(created.status).toBe(201);
    const { video } = (await created.json()) as { video: { id: string } };
    expect(await tracks(key, video.id)).toEqual([]);
    // Upload and probe: the video becomes playable, and the coordinator says so to the captions.
    const part = await api(
      `/v1/videos/${video.id}/upload/parts/1`,
      bearer(key, { method: "PUT", body: new Uint8Array(64), headers: { "content-type": "application/octet-stream" } }),
    );
    const { etag } = (await part.json()) as { etag: string };
    await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag }] })),
    );
    await runEncodes(encodeMessages().filter((message) => message.videoId === video.id));
    const probe = jobsOf(encoder(), video.id, "probe").at(-1) as Job;
    expect((await result(probe, { probe: probeFacts(10) })).status).toBe(204);
    expect(captionMessages().filter((message) => message.videoId === video.id)).toMatchObject([
      { type: "playable", languages: ["en", "en-GB"] },
    ]);
    await runNewCaptions(video.id);
    expect(await tracks(key, video.id)).toMatchObject([
      { language: "en", status: "processing", label: "English (auto-generated)" },
      { language: "en-GB", status: "processing", label: "British English (auto-generated)" },
    ]);
    const asked = encodeMessages().filter((message) => message.videoId === video.id && "hear" in message);
    expect(asked.map((message) => (message as unknown as { hear: { language: string } }).hear.language)).toEqual([
      "en",
      "en-GB",
    ]);
    await coordinatorOf(env, video.id).cancel();
  });

  it("refuses a language the engine does not hear, a malformed or repeated one, or more than five", async () => {
    const { key } = await newWorkspace();
    const cases: [unknown, number, string][] = [
      [["fr"], 400, "language_not_supported"],
      [["not a tag"], 400, "invalid_body"],
      [["en", "EN"], 400, "invalid_body"],
      [["en", "en-GB", "en-US", "en-AU", "en-CA", "en-NZ"], 400, "invalid_body"],
    ];
    for (const [generatedCaptions, status, code] of cases) {
      const answer = await api("/v1/videos", bearer(key, json("POST", { generatedCaptions })));
      expect([answer.status, await errorCode(answer)]).toEqual([status, code]);
    }
    encoder().speech = null;
    const answer = await api("/v1/videos", bearer(key, json("POST", { generatedCaptions: ["en"] })));
    expect([answer.status, await errorCode(answer)]).toEqual([503, "transcription_unavailable"]);
  });
});

describe("Workers AI, heard through the Worker", () => {
  it("takes a speech job's audio and answers Whisper's words, on the same path as production", async () => {
    const { key } = await newWorkspace();
    const { id, projectId } = await readyVideo(key);
    // As the route asks when SPEECH_ENGINE is workers-ai: the encoder sends the audio back here.
    await runEncodes([
      {
        projectId,
        videoId: id,
        hear: { language: "en", generation: "01J00000000000000000000001", heardAs: "en", recognizer: "worker" },
      } as never,
    ]);
    const job = speechJobs(id).at(-1) as SpeechJob;
    expect(job.recognizer).toBe("worker");
    const run = vi.spyOn(env.AI, "run").mockResolvedValue({
      text: "Hello there.",
      segments: [
        {
          start: 0.5,
          end: 1.5,
          words: [
            { word: " Hello", start: 0.5, end: 0.9 },
            { word: " there.", start: 0.9, end: 1.5 },
          ],
        },
      ],
    } as never);
    const wav = new Uint8Array(1000);
    const answer = await callback(job, "speech", {
      method: "PUT",
      body: wav,
      headers: { "content-type": "audio/wav" },
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      words: [
        { text: "Hello", start: 0.5, end: 0.9 },
        { text: "there.", start: 0.9, end: 1.5 },
      ],
    });
    expect(run).toHaveBeenCalledWith("@cf/openai/whisper-large-v3-turbo", expect.objectContaining({ language: "en" }));
    const tooLarge = await callback(job, "speech", {
      method: "PUT",
      body: new Uint8Array(2 * 1024 * 1024),
      headers: { "content-type": "audio/wav" },
    });
    expect(tooLarge.status).toBe(413);
    await coordinatorOf(env, id).cancel();
  });
});

// @ts-check
// Speech jobs (media-plan/PROTOCOL.md, "Speech"): a chunk's audio cut from the source and heard by
// the encoder's pocketsphinx, or sent to the Worker (Workers AI). The units run anywhere; the runs
// need espeak-ng (to speak known words) and pocketsphinx (to hear them): CI has both
// (REQUIRE_SPEECH=1), elsewhere they are skipped with a note.

import { describe, expect, it } from "vitest";
import { planEncoding } from "../../media-plan/plan.mjs";
import { audioSpan, chunkWords, EDGE_SECONDS, pocketsphinxWords, speechAudioArgs } from "../speech.mjs";
import { binaries, encoderHarness } from "./harness.mjs";
import { makeSpokenClip, requireSpeech } from "./spoken.mjs";

/** @typedef {import("../../media-plan/protocol.mjs").SpeechJob} SpeechJob */

const PROBE = {
  format: "mov",
  duration: 70,
  startTime: 0,
  width: 320,
  height: 180,
  frameRate: 25,
  videoStream: 0,
  audioStream: 1,
  interlaced: false,
};
const SETTINGS = { enabledResolutions: ["240p"], mp4: false, watermark: null };

/** A speech job of `plan`'s chunk `from`..`to`. @returns {SpeechJob} */
function speechJob(plan = planEncoding(PROBE, SETTINGS), from = 30, to = 60) {
  return {
    version: 2,
    jobId: "speech-1",
    priority: "background",
    callback: { baseUrl: "http://worker.test/jobs/1", token: "t".repeat(20) },
    kind: "speech",
    plan,
    language: "en",
    from,
    to,
    recognizer: "encoder",
  };
}

/** What the harness posts of a job: its own fields (it adds the id, the version and the callback). @param {SpeechJob} job */
function jobFields({ version: _version, jobId: _jobId, callback: _callback, ...fields }) {
  return fields;
}

describe("a speech job's parts", () => {
  it("reads pocketsphinx's words and their times, without its marks", () => {
    const output = [
      "welcome to the service",
      "<s> 0.000 0.180 0.998801",
      "welcome 0.190 0.620 0.040358",
      "<sil> 0.630 0.710 0.114859",
      "the(2) 1.790 1.930 0.999500",
      "[NOISE] 2.000 2.100 0.5",
      "++BREATH++ 2.100 2.200 0.5",
      "</s> 3.920 4.590 1.000000",
    ].join("\n");
    expect(pocketsphinxWords(output)).toEqual([
      { text: "welcome", start: 0.19, end: 0.62 },
      { text: "the", start: 1.79, end: 1.93 },
    ]);
  });

  it("cuts the chunk's audio with a second on each side, within the video, after a clip's offset", () => {
    const plan = planEncoding(PROBE, SETTINGS, { clip: { start: 5, end: 65 } });
    const job = speechJob(plan, 30, 60);
    expect(audioSpan(job)).toEqual({ start: 29, end: 60 });
    const args = speechAudioArgs({ job, source: { url: "http://worker.test/source", token: "t" }, file: "out.wav" });
    expect(args.slice(args.indexOf("-ss"), args.indexOf("-ss") + 2)).toEqual(["-ss", "34"]);
    expect(args.slice(args.indexOf("-t"), args.indexOf("-t") + 2)).toEqual(["-t", "31"]);
    expect(args).toEqual(expect.arrayContaining(["-map", "0:1", "-ac", "1", "-ar", "16000", "-f", "wav"]));
  });

  it("keeps the words whose middle is in the chunk, in the video's time", () => {
    const job = speechJob(undefined, 30, 60);
    const heard = [
      { text: "before", start: 0.2, end: 0.8 }, // 29.2–29.8: the chunk before's
      { text: "across", start: 0.8, end: 1.4 }, // 29.8–30.4: its middle at 30.1, this chunk's
      { text: "inside", start: 10, end: 10.5 },
      { text: "after", start: 30.6, end: 31 }, // 59.6–60: middle 59.8, this chunk's
      { text: "next", start: 31.1, end: 31.6 }, // the next chunk's
    ];
    expect(chunkWords(job, heard).map((word) => [word.text, word.start, word.end])).toEqual([
      ["across", 29.8, 30.4],
      ["inside", 39, 39.5],
      ["after", 59.6, 60],
    ]);
    // The last chunk keeps what is said at the video's very end.
    const last = speechJob(undefined, 60, 70);
    expect(chunkWords(last, [{ text: "end", start: 10.5, end: 11.4 }])).toEqual([
      { text: "end", start: 69.5, end: 70 },
    ]);
    expect(EDGE_SECONDS).toBe(1);
  });
});

describe("speech jobs on the encoder", () => {
  const speech = requireSpeech("the encoder's speech jobs");
  const harness = encoderHarness();
  const sentences = [
    { at: 0.5, text: "Welcome to the video hosting service." },
    { at: 12, text: "Thank you for watching this short video." },
  ];

  it.runIf(speech)("hears the words said in a chunk with pocketsphinx, placed where they were said", async () => {
    const { bytes, words } = await makeSpokenClip(binaries, harness.scratch, { sentences, seconds: 18 });
    const plan = await harness.planOf(bytes, SETTINGS);
    const { result } = await harness.run(bytes, jobFields(speechJob(plan, 0, 18)));
    if (result.status !== "done" || !result.speech) throw new Error(JSON.stringify(result));
    const heard = result.speech.words;
    expect(heard.length).toBeGreaterThan(4);
    // Every word heard lies where a word was said (within a second), none in the 8 s silence.
    for (const word of heard) {
      const near = words.some((said) => word.start < said.end + 1 && word.end > said.start - 1);
      expect(near, JSON.stringify(word)).toBe(true);
    }
    expect(heard.some((word) => word.start < 5)).toBe(true);
    expect(heard.some((word) => word.start > 11)).toBe(true);
  });

  it.runIf(speech)(
    "sends the audio to the Worker when it hears it, and reports its words in the video's time",
    async () => {
      const { bytes } = await makeSpokenClip(binaries, harness.scratch, { sentences, seconds: 18 });
      const plan = await harness.planOf(bytes, SETTINGS);
      const heard = [
        { text: "before", start: 0.1, end: 0.5 },
        { text: "thank", start: 2.1, end: 2.5 },
      ];
      const job = jobFields({ ...speechJob(plan, 10, 18), recognizer: "worker" });
      const { result, job: fake } = await harness.run(bytes, job, { heard });
      expect(result).toMatchObject({ status: "done", speech: { words: [{ text: "thank", start: 11.1, end: 11.5 }] } });
      // 9 s of 16 kHz mono 16-bit audio, as WAV.
      const audio = fake.speechAudio ?? Buffer.alloc(0);
      expect(audio.toString("ascii", 0, 4)).toBe("RIFF");
      expect(audio.readUInt32LE(24)).toBe(16_000);
      expect(audio.length).toBeGreaterThan(9 * 32_000 * 0.95);
      expect(audio.length).toBeLessThan(9 * 32_000 * 1.05);
    },
  );

  it.runIf(speech)("says in its health check what it hears", async () => {
    const health = /** @type {{ speech: unknown }} */ (await (await fetch(`${harness.encoder.origin}/healthz`)).json());
    expect(health.speech).toEqual({ engine: "pocketsphinx", languages: ["en"] });
  });
});

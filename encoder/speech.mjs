// @ts-check
// A speech job (media-plan/PROTOCOL.md, "Speech"): the words said in a chunk of the video, heard by the
// encoder's own engine (pocketsphinx, English, no account and no network) or by the Worker it sends
// the audio to (Workers AI). The audio of the chunk, a second more on each side, is cut from the
// source as 16 kHz mono WAV; a word belongs to the chunk whose span holds its middle, so a word
// said across a chunk's edge is heard whole by one chunk and reported once.

import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { runBinary } from "./binaries.mjs";
import { runFfmpeg } from "./encode.mjs";
import { decimal } from "./ffmpeg-args.mjs";
import { sourceInput } from "./source.mjs";

/** @typedef {import("../media-plan/protocol.mjs").SpeechJob} SpeechJob */
/** @typedef {import("../media-plan/protocol.mjs").Word} Word */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */
/**
 * What a speech job needs of its callbacks: where the source is read, and the Worker's ear.
 * @typedef {{ source: import("./source.mjs").SourceInput, hearSpeech: (file: string) => Promise<Word[]> }} SpeechCallbacks
 */
/**
 * The encoder's own speech engine: pocketsphinx_continuous and its acoustic model, language model
 * and dictionary, with the languages they hear.
 * @typedef {{ program: string, hmm: string, lm: string, dict: string, languages: string[] }} SpeechEngine
 */

/** Seconds of audio heard beyond each edge of the chunk, so a word across an edge is heard whole. */
export const EDGE_SECONDS = 1;
/** The sample rate every speech engine here takes (pocketsphinx's models, Whisper's input). */
const SAMPLE_RATE = 16_000;

/** How to add the encoder's engine on Debian, said wherever it is missing. */
export const INSTALL_SPEECH = "sudo apt-get install -y pocketsphinx pocketsphinx-en-us";

/** Debian's pocketsphinx-en-us model. */
const DEFAULT_MODEL = "/usr/share/pocketsphinx/model/en-us";

/** @param {string} file */
function readable(file) {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The encoder's speech engine, or null when it is not installed: `pocketsphinx_continuous` on the
 * PATH (or POCKETSPHINX_PATH) and the US English model (POCKETSPHINX_MODEL, default Debian's).
 * @param {NodeJS.ProcessEnv} env
 * @returns {SpeechEngine | null}
 */
export function locateSpeech(env = process.env) {
  const program =
    env.POCKETSPHINX_PATH ||
    (env.PATH ?? "")
      .split(":")
      .filter(Boolean)
      .map((dir) => join(dir, "pocketsphinx_continuous"))
      .find((file) => {
        try {
          accessSync(file, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      });
  const model = env.POCKETSPHINX_MODEL || DEFAULT_MODEL;
  const engine = {
    hmm: join(model, "en-us"),
    lm: join(model, "en-us.lm.bin"),
    dict: join(model, "cmudict-en-us.dict"),
  };
  if (!program || !readable(join(engine.hmm, "mdef")) || !readable(engine.lm) || !readable(engine.dict)) return null;
  return { program, ...engine, languages: ["en"] };
}

/** What the health check says of speech: the engine and its languages, or null. @param {SpeechEngine | null} engine */
export function describeSpeech(engine) {
  return engine ? { engine: "pocketsphinx", languages: engine.languages } : null;
}

/**
 * The span of the video a chunk's audio is cut from: the chunk and EDGE_SECONDS on each side,
 * within the video (a test video's first seconds, a clip's span).
 * @param {SpeechJob} job
 */
export function audioSpan(job) {
  return { start: Math.max(0, job.from - EDGE_SECONDS), end: Math.min(job.plan.duration, job.to + EDGE_SECONDS) };
}

/**
 * The ffmpeg arguments that cut a chunk's audio from the source: the plan's audio stream from the
 * span's start (after a clip's offset into the source), mixed to mono at 16 kHz, as 16-bit WAV.
 * @param {{ job: SpeechJob, source: import("./source.mjs").SourceInput, file: string }} run
 */
export function speechAudioArgs({ job, source, file }) {
  const { plan } = job;
  if (plan.source.audioStream === null) throw new RangeError("a source without audio has no speech");
  const span = audioSpan(job);
  return [
    "-hide_banner",
    "-nostdin",
    "-nostats",
    "-v",
    "error",
    "-y",
    "-progress",
    "pipe:1",
    "-ss",
    decimal(plan.source.offset + span.start),
    ...sourceInput(source, plan.source.format),
    "-t",
    decimal(span.end - span.start),
    "-map",
    `0:${plan.source.audioStream}`,
    "-vn",
    "-ac",
    "1",
    "-ar",
    String(SAMPLE_RATE),
    "-c:a",
    "pcm_s16le",
    "-map_metadata",
    "-1",
    "-f",
    "wav",
    file,
  ];
}

/** pocketsphinx's marks that are no words: sentence bounds, silence, noises and fillers. */
const NOT_A_WORD = /^(?:<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) [\d.]+$/;

/**
 * The words of pocketsphinx_continuous's output with `-time yes` (a hypothesis line per utterance,
 * then a line per word: `word start end probability`, times from the file's start), its alternate
 * pronunciations' marks dropped (`the(2)` is `the`).
 * @param {string} output
 * @returns {Word[]}
 */
export function pocketsphinxWords(output) {
  /** @type {Word[]} */
  const words = [];
  for (const line of output.split("\n")) {
    const match = WORD_LINE.exec(line.trim());
    if (!match) continue;
    const [, token = "", start = "0", end = "0"] = match;
    if (NOT_A_WORD.test(token)) continue;
    const text = token.replace(/\(\d+\)$/, "");
    if (text) words.push({ text, start: Number(start), end: Number(end) });
  }
  return words;
}

/**
 * The words of the chunk, from words heard in its audio (times from the audio's start): moved to
 * the video's time and kept when their middle is within the chunk, rounded to the millisecond.
 * @param {SpeechJob} job @param {Word[]} heard
 * @returns {Word[]}
 */
export function chunkWords(job, heard) {
  const offset = audioSpan(job).start;
  const round = (/** @type {number} */ t) => Math.round(t * 1000) / 1000;
  return heard
    .map((word) => ({ text: word.text, start: round(offset + word.start), end: round(offset + word.end) }))
    .filter((word) => {
      const middle = (word.start + word.end) / 2;
      return middle >= job.from && (middle < job.to || job.to >= job.plan.duration);
    })
    .map((word) => ({
      ...word,
      end: Math.min(word.end, job.plan.duration),
      start: Math.min(word.start, job.plan.duration),
    }))
    .sort((a, b) => a.start - b.start);
}

/**
 * Runs a speech job: the chunk's audio cut into the job's folder, heard by `engine` (the encoder's)
 * or by the Worker (`recognizer: "worker"`); resolves with the chunk's words.
 * @param {{ job: SpeechJob, client: SpeechCallbacks, binaries: Binaries, engine: SpeechEngine | null,
 *   dir: string, signal: AbortSignal, nice: boolean }} run
 * @returns {Promise<Word[]>}
 */
export async function runSpeech({ job, client, binaries, engine, dir, signal, nice }) {
  const file = join(dir, "speech.wav");
  const made = await runFfmpeg(binaries.ffmpeg, speechAudioArgs({ job, source: client.source, file }), {
    signal,
    stallMs: 60_000,
    nice,
  });
  if (!made.ok)
    throw new Error(
      `cutting the audio failed: ${made.failure}: ${made.stderr.trim().split("\n").slice(-2).join(" | ")}`,
    );
  if (job.recognizer === "worker") return chunkWords(job, await client.hearSpeech(file));
  if (!engine) throw new Error(`this encoder has no speech engine (${INSTALL_SPEECH})`);
  const heard = await runBinary(
    { path: engine.program, env: {} },
    [
      "-infile",
      file,
      "-time",
      "yes",
      "-logfn",
      "/dev/null",
      "-hmm",
      engine.hmm,
      "-lm",
      engine.lm,
      "-dict",
      engine.dict,
    ],
    { signal, timeoutMs: 120_000, nice },
  );
  if (heard.code !== 0) throw new Error(`pocketsphinx failed (exit ${heard.code}): ${heard.stderr.slice(-300)}`);
  return chunkWords(job, pocketsphinxWords(heard.stdout));
}

// @ts-check
// Speech of known words, for the tests and the benchmark of generated captions: each word said
// alone by espeak-ng (Debian's `espeak-ng`), its silence trimmed, the words of a sentence joined by
// short gaps, each sentence placed at a chosen time. Every word's time is then known to the
// millisecond, which is what the cues are held to.

import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runBinary } from "../binaries.mjs";
import { locateSpeech } from "../speech.mjs";

/** @typedef {import("../../media-plan/protocol.mjs").Word} Word */
/** @typedef {import("../binaries.mjs").Binaries} Binaries */

export const ESPEAK = process.env.ESPEAK_PATH || "espeak-ng";
/** How to add the tools these need on Debian. */
export const INSTALL_SPEECH_TOOLS = "apt-get install -y pocketsphinx pocketsphinx-en-us espeak-ng";
/** The pause between two words of a sentence. */
const WORD_GAP_SECONDS = 0.12;

/** Whether espeak-ng runs here. */
function espeakAvailable() {
  return spawnSync(ESPEAK, ["--version"], { encoding: "utf8" }).status === 0;
}

/**
 * Whether the speech tools are here (espeak-ng to speak, the encoder's pocketsphinx to hear). CI
 * installs them and sets REQUIRE_SPEECH=1, which makes a missing tool a failure; elsewhere the
 * tests that need them are skipped with a note saying how to add them.
 * @param {string} what the test, for the note
 */
export function requireSpeech(what) {
  if (espeakAvailable() && locateSpeech()) return true;
  if (process.env.REQUIRE_SPEECH === "1") {
    throw new Error(`REQUIRE_SPEECH=1 but espeak-ng or pocketsphinx is missing: ${INSTALL_SPEECH_TOOLS}`);
  }
  console.warn(`Skipping ${what}: no espeak-ng or pocketsphinx here; ${INSTALL_SPEECH_TOOLS} to run it.`);
  return false;
}

/**
 * The samples of a 16-bit mono PCM WAV file (as espeak-ng writes it) and its rate.
 * @param {Buffer} wav
 */
function readWav(wav) {
  let rate = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString("ascii", at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === "fmt ") rate = wav.readUInt32LE(at + 12);
    if (id === "data") {
      // espeak-ng writing to a file leaves the data size at its maximum: the rest of the file is the data.
      const end = Math.min(wav.length, at + 8 + size);
      const samples = new Int16Array(Math.floor((end - at - 8) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(at + 8 + 2 * i);
      return { rate, samples };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("no data chunk in the WAV file");
}

/** A 16-bit mono PCM WAV file of `samples` at `rate`. @param {Int16Array} samples @param {number} rate */
function wavOf(samples, rate) {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + samples.length * 2, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(samples.length * 2, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}

/** The samples without the silence espeak-ng puts before and after a word. @param {Int16Array} samples */
function trimmed(samples) {
  const loud = (/** @type {number} */ value) => Math.abs(value) > 400;
  let first = 0;
  while (first < samples.length && !loud(/** @type {number} */ (samples[first]))) first++;
  let last = samples.length - 1;
  while (last > first && !loud(/** @type {number} */ (samples[last]))) last--;
  return samples.subarray(first, last + 1);
}

/**
 * A WAV file `seconds` long of the sentences said at their times, and every word's time.
 * @param {string} dir where the files go
 * @param {{ at: number, text: string }[]} sentences
 * @param {number} seconds
 * @returns {Promise<{ wav: string, words: Word[] }>}
 */
export async function makeSpokenAudio(dir, sentences, seconds) {
  /** @type {Map<string, { rate: number, samples: Int16Array }>} */
  const said = new Map();
  for (const text of new Set(sentences.flatMap((sentence) => sentence.text.split(" ")))) {
    const file = join(dir, `word-${said.size}.wav`);
    const spoken = spawnSync(ESPEAK, ["-v", "en-us", "-s", "150", "-w", file, text.replace(/[.,!?]/g, "")], {
      encoding: "utf8",
    });
    if (spoken.status !== 0) throw new Error(`espeak-ng failed: ${spoken.stderr}`);
    const { rate, samples } = readWav(await readFile(file));
    said.set(text, { rate, samples: trimmed(samples) });
  }
  const rate = [...said.values()][0]?.rate ?? 22_050;
  const out = new Int16Array(Math.round(seconds * rate));
  /** @type {Word[]} */
  const words = [];
  for (const sentence of sentences) {
    let at = sentence.at;
    for (const text of sentence.text.split(" ")) {
      const word = /** @type {{ samples: Int16Array }} */ (said.get(text));
      const from = Math.round(at * rate);
      out.set(word.samples.subarray(0, Math.max(0, out.length - from)), from);
      const end = at + word.samples.length / rate;
      words.push({ text, start: Number(at.toFixed(3)), end: Number(end.toFixed(3)) });
      at = end + WORD_GAP_SECONDS;
    }
  }
  const wav = join(dir, "speech.wav");
  await writeFile(wav, wavOf(out, rate));
  return { wav, words };
}

/**
 * A video (a test pattern, H.264/AAC in MP4) `seconds` long whose sound is the sentences said at
 * their times; its bytes and every word's time.
 * @param {Binaries} binaries
 * @param {string} dir
 * @param {{ sentences: { at: number, text: string }[], seconds: number, width?: number, height?: number }} clip
 */
export async function makeSpokenClip(binaries, dir, clip) {
  const { wav, words } = await makeSpokenAudio(dir, clip.sentences, clip.seconds);
  const file = join(dir, "spoken.mp4");
  const size = `${clip.width ?? 320}x${clip.height ?? 180}`;
  const run = await runBinary(
    binaries.ffmpeg,
    [
      "-hide_banner",
      "-nostdin",
      "-v",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      `testsrc2=s=${size}:r=25:d=${clip.seconds}`,
      "-i",
      wav,
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
      "-t",
      String(clip.seconds),
      "-f",
      "mp4",
      file,
    ],
    { timeoutMs: Math.max(60_000, clip.seconds * 1000) },
  );
  if (run.code !== 0) throw new Error(`ffmpeg could not make the spoken clip: ${run.stderr}`);
  return { file, bytes: await readFile(file), words };
}

// `npm run bench:speech`: generated captions' figures (docs/generated-captions.md), through `npm
// run dev` and the encoder's engine (pocketsphinx; needs it and espeak-ng installed). For videos of
// speech of known words (each word said by espeak-ng, so every word's time is known) 1 and 10
// minutes long (BENCH_SPEECH_MINUTES=1,10): the time from the request to a ready track against the
// video's duration, the share of the words said that the track holds (in order), and the cue
// timing error (each cue's start against the start of the said word nearest it). Figures, not
// pass/fail.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { resolveBinaries } from "../encoder/binaries.mjs";
import { makeSpokenClip, requireSpeech } from "../encoder/test/spoken.mjs";
import type { Word } from "../media-plan/protocol.mjs";
import { parseWebVtt } from "../src/captions/webvtt.ts";
import { keyedTenant } from "../test/e2e/client.ts";
import { uploadFile, waitForStatus } from "../test/e2e/media.ts";
import { startDevServer } from "../test/e2e/server.ts";

const MINUTES = (process.env.BENCH_SPEECH_MINUTES ?? "1,10").split(",").map(Number);
const LINES = [
  "Welcome to the video hosting service.",
  "Today we talk about captions that write themselves.",
  "Every video gets a track of its own speech.",
  "The words are heard in chunks of thirty seconds.",
  "Thank you for watching this short video.",
  "Please share it with your friends and family.",
];

if (!requireSpeech("npm run bench:speech")) process.exit(1);

/** Sentences every 8 s, cycling through LINES, for a video `seconds` long. */
function script(seconds: number) {
  const sentences: { at: number; text: string }[] = [];
  for (let at = 1, i = 0; at < seconds - 6; at += 8, i++)
    sentences.push({ at, text: LINES[i % LINES.length] as string });
  return sentences;
}

const normal = (word: string) => word.toLowerCase().replace(/[^a-z']/g, "");

/** How many of `said` appear in `heard` in the same order (the longest common subsequence). */
function inOrder(said: string[], heard: string[]): number {
  let previous = new Array<number>(heard.length + 1).fill(0);
  for (const word of said) {
    const row = [0];
    for (let j = 1; j <= heard.length; j++) {
      row[j] =
        word === heard[j - 1] ? (previous[j - 1] as number) + 1 : Math.max(previous[j] as number, row[j - 1] as number);
    }
    previous = row;
  }
  return previous[heard.length] as number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

const binaries = await resolveBinaries();
const scratch = mkdtempSync(path.join(tmpdir(), "bench-speech-"));
const server = await startDevServer();
try {
  const tenant = await keyedTenant(server.baseUrl, { name: "bench speech" });
  console.log(`generated captions (encoder's pocketsphinx), ${new Date().toISOString()}`);
  for (const minutes of MINUTES) {
    const seconds = minutes * 60;
    const dir = mkdtempSync(path.join(scratch, `${minutes}-`));
    const clip = await makeSpokenClip(binaries, dir, { sentences: script(seconds), seconds });
    const { video } = await uploadFile(tenant.call, clip.file, { title: `speech ${minutes} min` });
    const { id } = video;
    await waitForStatus(tenant.call, id, ["ready"], seconds * 2 + 120);
    const asked = Date.now();
    const generated = await tenant.call("POST", `/v1/videos/${id}/captions/en/generate`);
    if (generated.status !== 202) throw new Error(`generate: ${generated.status} ${generated.text}`);
    let status = "processing";
    while (status === "processing") {
      await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await tenant.call("GET", `/v1/videos/${id}/captions`)).json.data[0]?.status ?? "missing";
    }
    const took = (Date.now() - asked) / 1000;
    const vtt = await (await fetch(`${server.baseUrl}/play/${id}/captions/en.vtt`)).text();
    const parsed = parseWebVtt(vtt);
    const cues = parsed.ok ? parsed.cues : [];
    const heard = cues
      .flatMap((cue) => cue.text.split(/\s+/))
      .map(normal)
      .filter(Boolean);
    const said = clip.words.map((word: Word) => normal(word.text));
    const errors = cues
      .map((cue) => Math.min(...clip.words.map((word: Word) => Math.abs(word.start * 1000 - cue.start))) / 1000)
      .sort((a, b) => a - b);
    console.log(
      [
        `${minutes} min (${said.length} words said): track ${status} ${took.toFixed(1)} s after the request`,
        `(${((took / seconds) * 100).toFixed(1)}% of the duration);`,
        `${cues.length} cues, ${heard.length} words;`,
        `words heard right ${((inOrder(said, heard) / said.length) * 100).toFixed(0)}%;`,
        `cue start to nearest said word: median ${percentile(errors, 0.5).toFixed(2)} s,`,
        `p95 ${percentile(errors, 0.95).toFixed(2)} s, max ${(errors.at(-1) ?? 0).toFixed(2)} s`,
      ].join(" "),
    );
  }
} finally {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Word } from "../../media-plan/protocol.mjs";
import {
  cuesOf,
  LINGER_SECONDS,
  linesOf,
  MAX_CUE_SECONDS,
  MAX_LINE_LENGTH,
  MAX_LINES,
  MIN_CUE_SECONDS,
  PAUSE_SECONDS,
} from "../../src/captions/cues";
import type { Cue } from "../../src/captions/webvtt";
import { parseWebVtt, toWebVtt } from "../../src/captions/webvtt";

// The cues a generated track is made of (docs/generated-captions.md): whatever words an engine
// hears, the cues follow the speech and can be read.

/** Words said one after another from `at`, each `length` long with `gap` between them. */
function said(text: string, at: number, length = 0.3, gap = 0.1): Word[] {
  return text
    .split(" ")
    .map((word, i) => ({ text: word, start: at + i * (length + gap), end: at + i * (length + gap) + length }));
}

/** Every rule a generated track's cues keep, for words heard in a video of `duration` seconds. */
function expectReadable(cues: Cue[], words: Word[], duration: number) {
  const kept = words.filter((word) => word.text.trim() !== "" && word.start < duration);
  cues.forEach((cue, i) => {
    expect(cue.start).toBeGreaterThanOrEqual(0);
    expect(cue.end).toBeGreaterThan(cue.start);
    expect(cue.end).toBeLessThanOrEqual(Math.round(duration * 1000));
    expect(cue.end - cue.start).toBeLessThanOrEqual(MAX_CUE_SECONDS * 1000);
    const previous = cues[i - 1];
    if (previous) expect(cue.start).toBeGreaterThanOrEqual(previous.end);
    const lines = cue.text.split("\n");
    expect(lines.length).toBeLessThanOrEqual(MAX_LINES);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(MAX_LINE_LENGTH);
    // A cue starts within 1 s of a word it shows, and lies on speech: a word said within it (or
    // within the second before it, where it was pushed on by the cue before).
    const within = kept.filter((word) => word.start * 1000 <= cue.end && word.end * 1000 >= cue.start - 1000);
    expect(within.length).toBeGreaterThan(0);
    expect(Math.min(...within.map((word) => Math.abs(word.start * 1000 - cue.start)))).toBeLessThanOrEqual(1000);
    // No cue shows through a pause of more than PAUSE_SECONDS between the words within it.
    const inside = kept.filter((word) => word.start * 1000 >= cue.start && word.start * 1000 < cue.end);
    for (let w = 1; w < inside.length; w++) {
      expect((inside[w] as Word).start - (inside[w - 1] as Word).end).toBeLessThanOrEqual(PAUSE_SECONDS + 1e-9);
    }
  });
}

describe("cues of the words heard", () => {
  it("two sentences 8 s apart become cues on each, none in the silence between", () => {
    const first = said("Welcome to the video hosting service today we talk about captions", 0.5);
    const second = said("Thank you for watching this short video", 14);
    const cues = cuesOf([...first, ...second], 20);
    expectReadable(cues, [...first, ...second], 20);
    const lastOfFirst = first.at(-1) as Word;
    for (const cue of cues) {
      // Nothing is shown between a little after the first sentence and the second one's start.
      const inSilence = cue.start > (lastOfFirst.end + LINGER_SECONDS) * 1000 && cue.end <= 14_000;
      expect(inSilence).toBe(false);
      expect(cue.start < 14_000 && cue.end > (lastOfFirst.end + MIN_CUE_SECONDS) * 1000).toBe(false);
    }
    expect(cues[0]?.start).toBe(500);
    expect(cues.find((cue) => cue.start >= 14_000)?.start).toBe(14_000);
    expect(cues.map((cue) => cue.text.replace("\n", " ")).join(" ")).toBe(
      [...first, ...second].map((word) => word.text).join(" "),
    );
  });

  it("breaks a long stretch of speech into cues of at most 7 s and two lines of 42 characters", () => {
    const words = said(Array.from({ length: 60 }, (_, i) => `word${i}`).join(" "), 0, 0.25, 0.05);
    const cues = cuesOf(words, 30);
    expectReadable(cues, words, 30);
    expect(cues.length).toBeGreaterThanOrEqual(5);
    expect(cues.map((cue) => cue.text.replace("\n", " ")).join(" ")).toBe(words.map((word) => word.text).join(" "));
    expect(cues.some((cue) => cue.text.includes("\n"))).toBe(true);
  });

  it("ends a cue at a sentence's end, and balances its two lines", () => {
    const cues = cuesOf(said("The first sentence ends here. And the second one begins right after it.", 1), 10);
    expect(cues[0]?.text).toBe("The first sentence ends here.");
    expect(linesOf("And the second one begins right after it and goes on")).toEqual([
      "And the second one begins",
      "right after it and goes on",
    ]);
    expect(linesOf("x".repeat(43))).toBeNull();
  });

  it("keeps a short word up long enough to read, never into the next cue or past the end", () => {
    const cues = cuesOf(
      [
        { text: "Hi.", start: 1, end: 1.2 },
        { text: "there", start: 1.6, end: 1.9 },
      ],
      1.8,
    );
    expect(cues).toEqual([
      { start: 1000, end: 1600, settings: "", text: "Hi." },
      { start: 1600, end: 1800, settings: "", text: "there" },
    ]);
  });

  it("cuts a word longer than a line, and drops blank words and words past the end", () => {
    const long = "a".repeat(100);
    const cues = cuesOf(
      [
        { text: long, start: 0, end: 3 },
        { text: "  ", start: 3, end: 3.1 },
        { text: "late", start: 9, end: 9.5 },
      ],
      5,
    );
    expect(cues.map((cue) => cue.text.replace("\n", "")).join("")).toBe(long);
    for (const cue of cues) for (const line of cue.text.split("\n")) expect(line.length).toBeLessThanOrEqual(42);
  });

  it("is WebVTT that reads back as it was written", () => {
    const cues = cuesOf(said("one two three four five six seven", 0.25), 5);
    const parsed = parseWebVtt(toWebVtt(cues));
    expect(parsed).toEqual({ ok: true, cues });
  });

  it("keeps every rule for any words an engine could hear", () => {
    const word = fc.record({
      text: fc.oneof(
        fc.constantFrom("yes", "no", "captions", "extraordinarily", "a.", "well?"),
        fc.string({ maxLength: 60 }),
      ),
      start: fc.double({ min: 0, max: 120, noNaN: true }),
      length: fc.double({ min: 0, max: 9, noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 80 }),
        fc.double({ min: 0.5, max: 120, noNaN: true }),
        (drawn, duration) => {
          const words = drawn.map(({ text, start, length }) => ({ text, start, end: start + length }));
          const cues = cuesOf(words, duration);
          expectReadable(cues, words, duration);
          expect(parseWebVtt(toWebVtt(cues)).ok).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

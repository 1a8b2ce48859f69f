import type { Word } from "../../media-plan/protocol.mjs";
import { withoutControlCharacters } from "../http/schemas";
import type { Cue } from "./webvtt";

/**
 * Cues a person can read, made from the words an engine heard (docs/generated-captions.md): the
 * same for every engine. Each cue shows words said together: it starts when its first word does,
 * never runs over a pause longer than PAUSE_SECONDS, lasts at most MAX_CUE_SECONDS, and holds at
 * most MAX_LINES lines of MAX_LINE_LENGTH characters, broken where the two lines are most even. It
 * stays up a little after its last word (at least MIN_CUE_SECONDS in all, at most LINGER_SECONDS
 * past that word), never into the next cue nor past the video's end. Cues are in order and never
 * overlap; no word is left out (but one said in the video's last millisecond, which has no time left).
 */

export const MAX_CUE_SECONDS = 7;
export const MAX_LINES = 2;
export const MAX_LINE_LENGTH = 42;
/** A pause longer than this between two words ends a cue: a cue never shows through a silence. */
export const PAUSE_SECONDS = 1;
/** How long a cue stays up at least, so a short word can be read. */
export const MIN_CUE_SECONDS = 1;
/** How long a cue may stay up after its last word. */
export const LINGER_SECONDS = 0.8;

/** Sentence ends: a cue that has one ends there. */
const SENTENCE_END = /[.!?…。！？]["»”')\]]*$/;

/**
 * The lines `text` is shown on: itself when it fits one line, else two lines broken at the space
 * that makes them most even; null when it cannot fit MAX_LINES lines.
 */
export function linesOf(text: string): string[] | null {
  if (text.length <= MAX_LINE_LENGTH) return [text];
  let best: string[] | null = null;
  for (let at = text.indexOf(" "); at >= 0; at = text.indexOf(" ", at + 1)) {
    const lines = [text.slice(0, at), text.slice(at + 1)];
    if (lines.some((line) => line.length > MAX_LINE_LENGTH)) continue;
    const longest = Math.max(...lines.map((line) => line.length));
    if (!best || longest < Math.max(...best.map((line) => line.length))) best = lines;
  }
  return best;
}

/**
 * A word's text as a cue may hold it: no control characters and no WebVTT cue arrow (which would
 * end the cue's text), white space folded.
 */
function printable(text: string): string {
  return withoutControlCharacters(text).replaceAll("-->", "→").replace(/\s+/g, " ").trim();
}

/**
 * The words as cues can hold them: cleaned (white space folded, empty ones dropped), within the
 * video, in order, and a word longer than a line cut into pieces that share its time.
 */
function readable(words: readonly Word[], duration: number): Word[] {
  const out: Word[] = [];
  for (const word of [...words].sort((a, b) => a.start - b.start)) {
    const text = printable(word.text);
    const start = Math.max(0, word.start);
    if (!text || start >= duration) continue;
    const end = Math.min(duration, Math.max(start, word.end));
    const pieces = Math.ceil(text.length / MAX_LINE_LENGTH);
    for (let i = 0; i < pieces; i++) {
      const share = (end - start) / pieces;
      out.push({
        text: text.slice(i * MAX_LINE_LENGTH, (i + 1) * MAX_LINE_LENGTH),
        start: start + i * share,
        end: start + (i + 1) * share,
      });
    }
  }
  return out;
}

/** The words of each cue, in order: a new cue at a pause, a sentence's end, or where the words would not fit. */
function groups(words: readonly Word[]): Word[][] {
  const all: Word[][] = [];
  let current: Word[] = [];
  for (const word of words) {
    const last = current.at(-1);
    const first = current[0];
    const fits =
      last !== undefined &&
      first !== undefined &&
      word.start - last.end <= PAUSE_SECONDS &&
      !SENTENCE_END.test(last.text) &&
      word.end - first.start <= MAX_CUE_SECONDS &&
      linesOf([...current, word].map((w) => w.text).join(" ")) !== null;
    if (!fits && current.length > 0) {
      all.push(current);
      current = [];
    }
    current.push(word);
  }
  if (current.length > 0) all.push(current);
  return all;
}

const ms = (seconds: number) => Math.round(seconds * 1000);

/** The cues of `words` (times in seconds of the video) for a video of `duration` seconds. */
export function cuesOf(words: readonly Word[], duration: number): Cue[] {
  const cues: Cue[] = [];
  const all = groups(readable(words, duration));
  const videoEnd = ms(duration);
  all.forEach((group, i) => {
    const first = group[0] as Word;
    const last = group.at(-1) as Word;
    const next = all[i + 1]?.[0];
    const text = group.map((word) => word.text).join(" ");
    const previous = cues.at(-1);
    // Words said at the same instant as the cue before's end follow it, a millisecond on.
    const start = Math.max(ms(first.start), previous?.end ?? 0);
    const wanted = Math.max(last.end, Math.min(first.start + MIN_CUE_SECONDS, last.end + LINGER_SECONDS));
    let end = Math.min(ms(wanted), ms(first.start + MAX_CUE_SECONDS), videoEnd, next ? ms(next.start) : videoEnd);
    if (end <= start) end = Math.min(start + 1, videoEnd);
    // No time is left at the video's very end (words said in its last millisecond): no cue.
    if (end <= start) return;
    cues.push({ start, end, settings: "", text: (linesOf(text) as string[]).join("\n") });
  });
  return cues;
}

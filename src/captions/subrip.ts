import { addCue, type Cue, excerpt, hoursProblem, LINE_TERMINATOR, millis, type Parsed, withoutBom } from "./webvtt";

/**
 * SubRip (.srt), read strictly: blocks separated by blank lines (a line of spaces counts as blank,
 * as SubRip tools write them), each a cue number, a timing line `hh:mm:ss,ttt --> hh:mm:ss,ttt`
 * (two hour digits, at most 99 as WebVTT writes them back; optionally followed by the X1/X2/Y1/Y2 box some tools add, which WebVTT
 * has no place for and is dropped) and the cue's text lines. At least one cue; the same order rules
 * as WebVTT (docs/captions-and-embed.md).
 */

const TIMESTAMP = "(\\d{2,}):([0-5]\\d):([0-5]\\d),(\\d{3})";
const TIMING = new RegExp(
  `^${TIMESTAMP}[ \\t]+-->[ \\t]+${TIMESTAMP}(?:[ \\t]+X1:-?\\d+[ \\t]+X2:-?\\d+[ \\t]+Y1:-?\\d+[ \\t]+Y2:-?\\d+)?[ \\t]*$`,
  "i",
);
const CUE_NUMBER = /^\d+$/;

const isBlank = (line: string) => line.trim() === "";

export function parseSubRip(text: string): Parsed {
  const lines = withoutBom(text).split(LINE_TERMINATOR);
  const cues: Cue[] = [];
  let at = 0;
  for (;;) {
    while (at < lines.length && isBlank(lines[at] as string)) at++;
    if (at >= lines.length) break;
    if (!CUE_NUMBER.test((lines[at] as string).trim())) {
      return { ok: false, problem: `line ${at + 1}: expected a cue number` };
    }
    const timingLine = lines[at + 1] ?? "";
    const timing = TIMING.exec(timingLine.trim());
    if (!timing) {
      return {
        ok: false,
        problem: `line ${at + 2}: "${excerpt(timingLine)}" is not a cue timing line (hh:mm:ss,ttt --> hh:mm:ss,ttt)`,
      };
    }
    const timingNumber = at + 2;
    const hours = hoursProblem(timing);
    if (hours) return { ok: false, problem: `line ${timingNumber}: ${hours}` };
    at += 2;
    const text: string[] = [];
    for (; at < lines.length && !isBlank(lines[at] as string); at++) {
      const line = lines[at] as string;
      // WebVTT reads "-->" as a cue timing: a text line holding it is a blank line gone missing.
      if (line.includes("-->"))
        return { ok: false, problem: `line ${at + 1}: "-->" inside a cue's text (is a blank line missing before it?)` };
      text.push(line);
    }
    const cue = { start: millis(timing, 1), end: millis(timing, 5), settings: "", text: text.join("\n") };
    const problem = addCue(cues, cue, timingNumber);
    if (problem) return { ok: false, problem };
  }
  if (cues.length === 0) return { ok: false, problem: "no cues: a SubRip file holds at least one" };
  return { ok: true, cues };
}

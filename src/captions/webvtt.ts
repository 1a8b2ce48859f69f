/**
 * WebVTT (W3C WebVTT, "file structure" and "cue timings and settings"), read strictly: a file that
 * a browser would read differently from what it says, or only in part, is refused with the line at
 * fault, rather than stored and played without some of its cues. Times are whole milliseconds.
 */

/** One cue: its times in milliseconds, its settings as written, its text lines joined by "\n". */
export type Cue = { start: number; end: number; settings: string; text: string };

export type Parsed = { ok: true; cues: Cue[] } | { ok: false; problem: string };

/** Every line terminator of WebVTT (CRLF, LF, CR) and of SubRip. */
export const LINE_TERMINATOR = /\r\n|\r|\n/;
const BOM = "\ufeff";

/** The text without the byte order mark an editor may put first. */
export function withoutBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

const SIGNATURE = /^WEBVTT(?:[ \t].*)?$/;
const ARROW = "-->";
// hours (two digits or more, checked after: see hoursProblem) are optional; minutes and seconds
// 00–59; exactly three fraction digits.
const TIMESTAMP = "(?:(\\d{2,}):)?([0-5]\\d):([0-5]\\d)\\.(\\d{3})";
const TIMING = new RegExp(`^${TIMESTAMP}[ \\t]+-->[ \\t]+${TIMESTAMP}(?:[ \\t]+(.*))?$`);
const NOTE = /^NOTE(?:[ \t].*)?$/;
const STYLE = /^STYLE[ \t]*$/;
const REGION = /^REGION[ \t]*$/;

const PERCENTAGE = "(?:\\d+(?:\\.\\d+)?)%";
/** Each cue setting and the values it takes (WebVTT §4.4; `middle` and `start`/`end` positions are the 2013 draft's, still written by tools). */
const SETTINGS: Record<string, RegExp> = {
  vertical: /^(?:rl|lr)$/,
  line: new RegExp(`^(?:${PERCENTAGE}|-?\\d+)(?:,(?:start|center|end))?$`),
  position: new RegExp(`^${PERCENTAGE}(?:,(?:line-left|center|line-right|start|middle|end))?$`),
  size: new RegExp(`^${PERCENTAGE}$`),
  align: /^(?:start|center|end|left|right|middle)$/,
  region: /^[^\s]+$/,
};

/**
 * Hours are at most 99, in two digits (docs/captions-and-embed.md): a time is kept exactly, and a stored or
 * converted time is written back with two hour digits (`formatTimestamp`), so a time with more
 * digits could not be written back as it was given. A problem, or null; `match` as for `millis`.
 */
export function hoursProblem(match: RegExpExecArray): string | null {
  for (const at of [1, 5]) {
    const hours = match[at];
    if (hours !== undefined && hours.length !== 2) {
      return `hours are written in two digits, at most 99 (${excerpt(hours)} given)`;
    }
  }
  return null;
}

/** A line as a problem quotes it: at most 60 characters, so a huge line makes no huge answer. */
export function excerpt(line: string): string {
  return line.length <= 60 ? line : `${line.slice(0, 60)}… (${line.length} characters)`;
}

/** Milliseconds of the timestamp a timing match holds from group `at` (hours, minutes, seconds, fraction). */
export function millis(match: RegExpExecArray, at: number): number {
  const [hours = "0", minutes = "0", seconds = "0", fraction = "0"] = match.slice(at, at + 4);
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Number(fraction);
}

/** A problem with a cue's settings, or null when every setting is known, well-formed and given once. */
function settingsProblem(settings: string): string | null {
  const seen = new Set<string>();
  for (const setting of settings.split(/[ \t]+/).filter(Boolean)) {
    const colon = setting.indexOf(":");
    const name = setting.slice(0, colon);
    const check = colon > 0 ? SETTINGS[name] : undefined;
    if (!check) return `unknown cue setting "${excerpt(setting)}"`;
    if (!check.test(setting.slice(colon + 1))) return `bad value in cue setting "${excerpt(setting)}"`;
    if (seen.has(name)) return `cue setting "${name}" given twice`;
    seen.add(name);
    // Anchored at the value's start: an unanchored search is tried at every digit of a long run of
    // digits and takes time in the square of its length (a setting of 100,000 digits, 17 s).
    const percentage = /^(\d+(?:\.\d+)?)%/.exec(setting.slice(colon + 1));
    if (percentage && Number(percentage[1]) > 100) return `percentage over 100% in cue setting "${excerpt(setting)}"`;
  }
  return null;
}

/** A cue's timing line: its times and settings, or what is wrong with it. */
export function parseTiming(line: string): { start: number; end: number; settings: string } | { problem: string } {
  const match = TIMING.exec(line);
  if (!match) return { problem: `"${excerpt(line)}" is not a cue timing line (hh:mm:ss.ttt --> hh:mm:ss.ttt)` };
  const hours = hoursProblem(match);
  if (hours) return { problem: hours };
  const settings = (match[9] ?? "").trim();
  const problem = settingsProblem(settings);
  if (problem) return { problem };
  return { start: millis(match, 1), end: millis(match, 5), settings };
}

/**
 * Reads a WebVTT file: the signature line, an optional header (lines without "-->") ended by a
 * blank line, then blocks separated by blank lines: comments (NOTE), and before the first cue
 * style sheets (STYLE) and regions (REGION); cues, each an optional identifier, a timing line with
 * valid settings, and text lines. Cues must not start before the cue before them, nor end before
 * they start; no line of any block but a cue's timing may hold "-->".
 */
export function parseWebVtt(text: string): Parsed {
  const lines = withoutBom(text).split(LINE_TERMINATOR);
  if (!SIGNATURE.test(lines[0] ?? "")) return { ok: false, problem: 'line 1: a WebVTT file starts with "WEBVTT"' };
  let at = 1;
  // The header: whatever follows the signature up to the first blank line (legacy metadata such as
  // "Kind: captions" or HLS's X-TIMESTAMP-MAP), never a cue.
  for (; at < lines.length && lines[at] !== ""; at++) {
    if (lines[at]?.includes(ARROW)) {
      return { ok: false, problem: `line ${at + 1}: a blank line must separate the header from the first cue` };
    }
  }
  const cues: Cue[] = [];
  for (;;) {
    while (at < lines.length && lines[at] === "") at++;
    if (at >= lines.length) return { ok: true, cues };
    const first = at;
    const block: string[] = [];
    while (at < lines.length && lines[at] !== "") block.push(lines[at++] as string);
    const problem = readBlock(block, first + 1, cues);
    if (problem) return { ok: false, problem };
  }
}

/**
 * Where a block's cue timing line is: a cue's is its first line or its second (after an
 * identifier); -1 for a block without one (a comment, a style sheet or a region).
 */
function timingLineOf(block: readonly string[]): number {
  return block[0]?.includes(ARROW) ? 0 : block[1]?.includes(ARROW) ? 1 : -1;
}

/** Reads one block starting at line `number`, adding its cue to `cues`; a problem, or null. */
function readBlock(block: string[], number: number, cues: Cue[]): string | null {
  const head = block[0] ?? "";
  const arrowAt = (from: number) => block.findIndex((line, i) => i >= from && line.includes(ARROW));
  // A block without a timing line holds no "-->" at all.
  const timingAt = timingLineOf(block);
  const kind = NOTE.test(head) ? "NOTE" : STYLE.test(head) ? "STYLE" : REGION.test(head) ? "REGION" : null;
  if (kind === "NOTE" && timingAt === 1) return `line ${number + 1}: "-->" inside a NOTE block`;
  if (timingAt < 0) {
    if (!kind)
      return `line ${number}: expected a cue: an optional identifier, then a timing line (hh:mm:ss.ttt --> hh:mm:ss.ttt)`;
    if (kind !== "NOTE" && cues.length > 0) return `line ${number}: ${kind} blocks must come before the first cue`;
    const stray = arrowAt(2);
    return stray < 0 ? null : `line ${number + stray}: "-->" inside a ${kind} block`;
  }
  const timing = parseTiming(block[timingAt] as string);
  if ("problem" in timing) return `line ${number + timingAt}: ${timing.problem}`;
  const stray = arrowAt(timingAt + 1);
  if (stray >= 0) return `line ${number + stray}: "-->" inside a cue's text (is a blank line missing before it?)`;
  return addCue(cues, { ...timing, text: block.slice(timingAt + 1).join("\n") }, number + timingAt);
}

/** Adds `cue` after the others, or says why it cannot follow them (the order rules of docs/captions-and-embed.md). */
export function addCue(cues: Cue[], cue: Cue, line: number): string | null {
  if (cue.end < cue.start) return `line ${line}: the cue ends before it starts`;
  const previous = cues.at(-1);
  if (previous && cue.start < previous.start) return `line ${line}: the cue starts before the cue before it`;
  cues.push(cue);
  return null;
}

/** A time in WebVTT's form, hours always written (two digits or more). */
export function formatTimestamp(ms: number): string {
  const pad = (value: number, width: number) => String(value).padStart(width, "0");
  const seconds = Math.floor(ms / 1000);
  return `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}.${pad(ms % 1000, 3)}`;
}

/** A WebVTT file holding these cues, as they are. */
export function toWebVtt(cues: Cue[]): string {
  const blocks = cues.map((cue) => {
    const timing = `${formatTimestamp(cue.start)} --> ${formatTimestamp(cue.end)}${cue.settings ? ` ${cue.settings}` : ""}`;
    return cue.text === "" ? timing : `${timing}\n${cue.text}`;
  });
  return ["WEBVTT", ...blocks].join("\n\n").concat("\n");
}

/** A range of a video in seconds, as a clip or a ranged playback token has it. */
export type SecondsRange = { start: number; end: number };

/**
 * Whether a cue (times in ms) meets `range` (seconds): it ends after the range starts and starts
 * before it ends. Compared in seconds: a whole number of ms over 1000 is the same double as the
 * decimal a range is given in (`4350 / 1000 === 4.35`), so a cue ending where the range starts
 * does not meet it.
 */
function meets(cue: Pick<Cue, "start" | "end">, range: SecondsRange): boolean {
  return cue.end / 1000 > range.start && cue.start / 1000 < range.end;
}

/** The cues that meet `range` (seconds), in their order: what a file cut to a range holds. */
export function cuesMeeting(cues: Cue[], range: SecondsRange): Cue[] {
  return cues.filter((cue) => meets(cue, range));
}

/**
 * A stored WebVTT file cut to `range` (seconds): its header and the style sheets and regions
 * before its first cue as written, then the cues that meet the range (`cuesMeeting`'s rule), each
 * as written; comments and every other cue left out. Lines end in LF. A block whose timing does
 * not read (never in a file this service stored) is left out too: what cannot be placed in time
 * cannot be shown to lie within the range.
 */
export function webVttMeeting(vtt: string, range: SecondsRange): string {
  const lines = withoutBom(vtt).split(LINE_TERMINATOR);
  const headerEnd = lines.indexOf("");
  const out = headerEnd < 0 ? lines : lines.slice(0, headerEnd);
  let cueSeen = false;
  for (let at = headerEnd < 0 ? lines.length : headerEnd; at < lines.length; ) {
    while (at < lines.length && lines[at] === "") at++;
    const block: string[] = [];
    while (at < lines.length && lines[at] !== "") block.push(lines[at++] as string);
    if (block.length === 0) break;
    const timingAt = timingLineOf(block);
    if (timingAt < 0) {
      if (!cueSeen && !NOTE.test(block[0] as string)) out.push("", ...block);
      continue;
    }
    cueSeen = true;
    const timing = parseTiming(block[timingAt] as string);
    if (!("problem" in timing) && meets(timing, range)) out.push("", ...block);
  }
  return `${out.join("\n")}\n`;
}

const CUE_TEXT_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/**
 * Plain text (one line) as a cue's text: `&`, `<` and `>` as the character references WebVTT
 * gives them, so that a player reads the text itself (no tag, no entity) and no line holds `-->`.
 */
export function escapeCueText(text: string): string {
  return text.replace(/[&<>]/g, (character) => CUE_TEXT_ESCAPES[character] as string);
}

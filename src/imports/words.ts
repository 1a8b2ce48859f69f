import type { Behind, Pace } from "./pace";

/**
 * An import's failure messages (docs/imports.md, "Failing"): this API's words, bounded. What an
 * origin controls (its reason phrase, a redirect's target) is clipped before it is quoted, and a
 * runtime's own error text is never quoted (it goes to the logs), so a message holds no more than
 * `MESSAGE_CHARS` characters whatever an origin sends.
 */

/** The most characters of `error.message` (and of the `video.errored` event that carries it). */
export const MESSAGE_CHARS = 500;
/** The most characters of an origin's reason phrase quoted ("404 Not Found"). */
export const REASON_CHARS = 100;
/** The most characters of a URL quoted (the source, a redirect's target). */
export const URL_CHARS = 200;

/**
 * `text` cut to at most `max` characters, an ellipsis marking the cut; never half a surrogate pair,
 * and control characters (which a message must not hold) made spaces.
 */
export function clip(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
  if (clean.length <= max) return clean;
  let end = max - 1;
  const last = clean.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${clean.slice(0, end)}…`;
}

/** The words of `error.message`: why the import failed, for a person. */
export function failureMessage(reason: string): string {
  return clip(`The import failed: ${reason.replace(/\.+$/, "")}.`, MESSAGE_CHARS);
}

/** An answer other than 2xx: its status code and at most `REASON_CHARS` of its reason phrase. */
export function originAnswered(status: number, reasonPhrase: string): string {
  const words = reasonPhrase.trim() ? ` ${clip(reasonPhrase.trim(), REASON_CHARS)}` : "";
  return `the origin answered ${status}${words}`;
}

export function tooLarge(maxBytes: number): string {
  return `the file is too large: more than ${maxBytes.toLocaleString("en-US")} bytes`;
}

/** An origin that fell behind its pace. */
export function behindReason(behind: Behind, pace: Pace): string {
  const window = `${pace.windowMs / 1000} s`;
  return behind === "nothing"
    ? `nothing received for ${window}`
    : `the origin sent less than ${bytesInWords(pace.minBytes)} in ${window}`;
}

function bytesInWords(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes.toLocaleString("en-US")} bytes`;
}

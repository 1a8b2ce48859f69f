/**
 * The one check of every value written into an HLS playlist (RFC 8216 §4.2): a quoted-string holds
 * no `"`, CR or LF, and an unquoted value or a URI line no line end either. Players split
 * playlists by more than RFC 8216's CR and LF: hls.js reads lines with JavaScript's regular
 * expressions, for which U+2028 (line separator) and U+2029 (paragraph separator) end a line too,
 * so a label holding one could add a line of its own (a subtitle track from another origin, say).
 * No value holds a line end of either kind, nor a control character.
 */

/** Line ends of every kind a player may split on, and control characters (C0, DEL, C1). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Whether `value` may stand in a playlist line (a URI, an unquoted attribute value). */
export function isPlaylistText(value: string): boolean {
  return !UNSAFE.test(value);
}

/** Whether `value` may stand in a playlist as a quoted-string: playlist text without `"`. */
export function isQuotedString(value: string): boolean {
  return isPlaylistText(value) && !value.includes('"');
}

/** A quoted-string attribute value (`"value"`); throws for a value that may not be one. */
export function quoted(value: string): string {
  if (!isQuotedString(value)) throw new RangeError(`not allowed in an HLS quoted-string: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/** A value or URI as a playlist line holds it; throws for one that may not stand there. */
export function playlistText(value: string): string {
  if (!isPlaylistText(value) || value.includes(",")) {
    throw new RangeError(`not allowed as an HLS value: ${JSON.stringify(value)}`);
  }
  return value;
}

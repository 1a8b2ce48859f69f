/** Bytes `offset` to `offset + length - 1` of a file. */
export type ByteRange = { offset: number; length: number };

/**
 * The one range a `Range` header asks of a file of `size` bytes (RFC 9110 §14): `bytes=a-b`,
 * `bytes=a-` or `bytes=-n`, the end clamped to the file. `null` means the whole file: no header, or
 * one this server ignores as the RFC allows (another unit, a malformed or a multi-range request).
 * `unsatisfiable` when the range starts past the end, or is an empty suffix.
 */
export function parseRange(header: string | undefined | null, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return size === 0 ? "unsatisfiable" : { offset: size - length, length };
  }
  const start = Number(first);
  const end = last === "" ? Number.MAX_SAFE_INTEGER : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return null;
  if (start >= size) return "unsatisfiable";
  return { offset: start, length: Math.min(end, size - 1) - start + 1 };
}

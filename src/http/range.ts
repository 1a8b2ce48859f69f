/** Bytes `offset` to `offset + length - 1` of a file. */
export type ByteRange = { offset: number; length: number };

/**
 * The one range a `Range` header asks of a file of `size` bytes (RFC 9110 §14): `bytes=a-b`,
 * `bytes=a-` or `bytes=-n`, the end clamped to the file. `null` means the whole file: no header, or
 * one this server ignores as the RFC allows (another unit, a malformed or a multi-range request).
 * `unsatisfiable` when the range starts past the end, or is an empty suffix. Positions are compared
 * as integers of any length: `bytes=99999999999999999999-` starts past the end of every file.
 */
export function parseRange(header: string | undefined | null, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return null;
  const total = BigInt(size);
  if (first === "") {
    const suffix = BigInt(last);
    if (suffix === 0n || total === 0n) return "unsatisfiable";
    const length = suffix < total ? suffix : total;
    return { offset: Number(total - length), length: Number(length) };
  }
  const start = BigInt(first);
  const end = last === "" ? null : BigInt(last);
  if (end !== null && end < start) return null;
  if (start >= total) return "unsatisfiable";
  const lastByte = end === null || end >= total ? total - 1n : end;
  return { offset: Number(start), length: Number(lastByte - start + 1n) };
}

import type { StoredPart } from "./source-queries";

/** A completion's parts in one canonical text: by part number, each with its etag. */
export function canonicalParts(parts: { partNumber: number; etag: string }[]): string {
  return JSON.stringify([...parts].sort((a, b) => a.partNumber - b.partNumber).map((p) => [p.partNumber, p.etag]));
}

/** R2's smallest part but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

const bytes = (n: number) => `${n.toLocaleString("en-US")} bytes`;

/**
 * Why these parts cannot complete an R2 multipart upload, naming the first part at fault, or null
 * when they can as far as the recorded sizes tell (R2 still checks the etags). R2's rule: every
 * part but the highest-numbered is one size, at least 5 MiB; the last may be smaller. A part with
 * no record (none was stored under that number) is left for R2 to refuse.
 */
export function partsProblem(requested: number[], stored: Map<number, StoredPart>): string | null {
  const numbers = [...requested].sort((a, b) => a - b);
  const last = numbers.at(-1);
  const sized = numbers.map((n) => ({ n, size: stored.get(n)?.size })).filter((p) => p.size !== undefined);
  const first = sized.find((p) => p.n !== last);
  if (!first || first.size === undefined) return null;
  if (first.size < MIN_PART_BYTES) {
    return `Part ${first.n} is ${bytes(first.size)}: every part but the last must be at least ${bytes(MIN_PART_BYTES)} (5 MiB).`;
  }
  for (const part of sized) {
    if (part.size === undefined) continue;
    if (part.n !== last && part.size !== first.size) {
      return `Part ${part.n} is ${bytes(part.size)}, but part ${first.n} is ${bytes(first.size)}: every part but the last must be one size.`;
    }
    if (part.n === last && part.size > first.size) {
      return `Part ${part.n}, the last, is ${bytes(part.size)}: it may not be larger than the others (${bytes(first.size)}).`;
    }
  }
  return null;
}

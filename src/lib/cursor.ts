import { fromBase64, toBase64Url } from "./encoding";
import { parseUlid } from "./ulid";

/** A keyset position: the last row of a page, ordered by createdAt then id, both descending. */
export type Position = { createdAt: string; id: string };

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(position: Position): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify(["k1", position.createdAt, position.id])));
}

/** The position a cursor names, or null when the text is not a cursor this API issued. */
export function decodeCursor(cursor: string): Position | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  try {
    const padded = cursor.replaceAll("-", "+").replaceAll("_", "/");
    const value: unknown = JSON.parse(
      new TextDecoder().decode(fromBase64(padded + "=".repeat((4 - (padded.length % 4)) % 4))),
    );
    if (!Array.isArray(value) || value.length !== 3 || value[0] !== "k1") return null;
    const [, createdAt, id] = value;
    const ulid = parseUlid(typeof id === "string" ? id : null);
    if (typeof createdAt !== "string" || !ISO_MS.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !ulid)
      return null;
    return { createdAt, id: ulid };
  } catch {
    return null;
  }
}

import { itemsGuess, itemsPerJob, nextPace, pacedKind } from "./coordinator-rules";
import type { EncodingStore, SegmentsUnit, TilesUnit, Unit } from "./coordinator-store";

/**
 * The pace of a video's paced units (its background runs, its storyboard's tiles: coordinator-rules.ts
 * `pacedKind`), kept in the coordinator's store (`pace:<kind>`, milliseconds per item): each job of
 * the kind is cut to what the last ones did in BACKGROUND_JOB_MS (docs/encoding.md, "Short jobs").
 */

/** The paced unit and its kind, or null for a unit that is not paced. */
function paced(unit: Unit): { kind: "run" | "tiles"; unit: SegmentsUnit | TilesUnit } | null {
  const kind = pacedKind(unit);
  return kind && (unit.kind === "segments" || unit.kind === "tiles") ? { kind, unit } : null;
}

/** A paced unit's job is done at `now`: the video's pace at its kind takes it in. */
export function takePace(store: EncodingStore, unit: Unit, now: number) {
  const found = paced(unit);
  if (!found || unit.started === null) return;
  const key = `pace:${found.kind}`;
  store.set(key, nextPace(store.get<number>(key), now - unit.started, found.unit.to - found.unit.from));
}

/**
 * A paced unit longer than its job should be (`itemsPerJob`) is cut before it starts: the rest of
 * its span waits as a unit of its own.
 */
export function cutToPace(store: EncodingStore, unit: Unit) {
  const found = paced(unit);
  if (!found) return;
  const span = found.unit;
  const items = itemsPerJob(store.get<number>(`pace:${found.kind}`), itemsGuess(span), span.to - span.from);
  if (items >= span.to - span.from) return;
  const at = span.from + items;
  store.splitUnit(span, at, `${found.kind}-${at}`);
  span.to = at;
}

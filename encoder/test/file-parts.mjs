// @ts-check
// A file made a part per job as the Worker asks for them (media-plan/files.mjs `nextPart`), for
// the tests and the bench, which play the Worker's side.

import { nextPart } from "../../media-plan/files.mjs";

/** @typedef {import("../../media-plan/files.mjs").MadePart} MadePart */
/** @typedef {import("../../media-plan/files.mjs").PartStep} PartStep */
/** @typedef {import("../../media-plan/protocol.mjs").FilePart} FilePart */
/** @typedef {import("../../media-plan/protocol.mjs").Fragment} Fragment */

/**
 * Runs each part's job (`runPart`, given its step and the index of every part but the first made
 * so far) until the file is complete; resolves with what each job made, in order, and the parts
 * made, the first part's last write in place of its measure.
 * @param {number} count the file's segments
 * @param {(step: PartStep, index: Fragment[]) => Promise<FilePart>} runPart
 */
export async function makeFileParts(count, runPart) {
  /** @type {MadePart[]} */
  const parts = [];
  /** @type {FilePart[]} */
  const made = [];
  for (let step = nextPart(count, parts); step !== "complete"; step = nextPart(count, parts)) {
    const index = parts.filter((part) => part.part > 1).flatMap((part) => part.fragments);
    const part = await runPart(step, index);
    made.push(part);
    const number = step.part;
    parts.splice(0, parts.length, ...parts.filter((p) => p.part !== number), { ...step, ...part });
  }
  return { made, parts: parts.sort((a, b) => a.part - b.part) };
}

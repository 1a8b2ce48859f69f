import { ApiFailure } from "./api";

/**
 * How a failure reads on a form: each `details` entry next to the field it names (by the entry's
 * path: `url`, `eventTypes.1`, `watermark.opacity` go to the field keyed `url`, `eventTypes`,
 * `watermark.opacity` or `watermark`), and the rest (the API's `message`, and entries naming no
 * field of the form) above the form.
 */
export type FormProblems = { form: string | null; fields: Record<string, string> };

export const NO_PROBLEMS: FormProblems = { form: null, fields: {} };

export function problemsOf(error: unknown, fieldNames: readonly string[]): FormProblems {
  if (!(error instanceof ApiFailure)) {
    return { form: error instanceof Error ? error.message : "Something went wrong. Try again.", fields: {} };
  }
  const fields: Record<string, string> = {};
  const unplaced: string[] = [];
  for (const detail of error.details) {
    const field = fieldFor(detail.path, fieldNames);
    if (field === null) unplaced.push(detail.message);
    else fields[field] = fields[field] ? `${fields[field]} ${detail.message}` : detail.message;
  }
  const placed = Object.keys(fields).length > 0;
  const form = placed && unplaced.length === 0 ? null : [error.message, ...unplaced].join(" ");
  // A field's own message when the API named it; else the failure's message beside the one field
  // the error code is about (e.g. invalid_name for a project name).
  return { form, fields };
}

/** The longest field name that is the path or a prefix of it at a `.` boundary. */
function fieldFor(path: string, fieldNames: readonly string[]): string | null {
  let best: string | null = null;
  for (const name of fieldNames) {
    if (path === name || path.startsWith(`${name}.`)) {
      if (best === null || name.length > best.length) best = name;
    }
  }
  return best;
}

/** The words of any failure, for places with no form (a row's action, a list that did not load). */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return "Something went wrong. Try again.";
}

import { env } from "cloudflare:workers";
import { livemodeOf, MODE_TABLES, type Mode } from "../../src/lib/tenant";
import { InstrumentedD1 } from "./d1";

/** A statement as D1 ran it: its SQL and the values bound to it. */
export type Ran = { sql: string; params: unknown[] };

/**
 * Bindings whose D1 records every statement a request runs (batches item by item), with the
 * values bound; `ran` holds them.
 */
export function recordingBindings(): { bindings: Partial<Env>; ran: Ran[] } {
  const ran: Ran[] = [];
  const db = new InstrumentedD1(env.DB);
  db.before = async (sql, params) => {
    ran.push({ sql, params });
  };
  return { bindings: { DB: db.binding }, ran };
}

const TABLES = MODE_TABLES.join("|");
const NAMES = new RegExp(`\\b(?:from|join|update|into)\\s+(?:${TABLES})\\b`, "i");
const PREDICATE = /\b(?:\w+\.)?livemode\s*=\s*(?:coalesce\(\s*)?(\?\d*)/gi;
const INSERT = new RegExp(`\\binto\\s+(?:${TABLES})\\s*\\(([^)]*)\\)\\s*(values\\s*\\(|select\\b)`, "gi");

/** The SQL with its string literals emptied, so a `?` or a name inside one counts for nothing. */
const withoutStrings = (sql: string) => sql.replace(/'(?:[^']|'')*'/g, "''");

/**
 * SQLite's parameter numbers of the placeholders at each offset of `sql`: `?N` is N, and a bare
 * `?` is one more than the largest number given before it.
 */
function placeholderNumbers(sql: string): Map<number, number> {
  const numbers = new Map<number, number>();
  let largest = 0;
  for (const match of sql.matchAll(/\?(\d*)/g)) {
    const number = match[1] ? Number(match[1]) : largest + 1;
    largest = Math.max(largest, number);
    numbers.set(match.index, number);
  }
  return numbers;
}

/**
 * The expressions of a comma list, top level only, up to its closing parenthesis (or the text's
 * end), each with its offset in `text`.
 */
function topLevelList(text: string): { expression: string; at: number }[] {
  const items: { expression: string; at: number }[] = [];
  let depth = 0;
  let start = 0;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "(") depth += 1;
    if (char === ")" && depth-- === 0) {
      end = i;
      break;
    }
    if (char === "," && depth === 0) {
      items.push({ expression: text.slice(start, i), at: start });
      start = i + 1;
    }
  }
  items.push({ expression: text.slice(start, end), at: start });
  return items.map(({ expression, at }) => ({
    expression: expression.trim(),
    at: at + (expression.length - expression.trimStart().length),
  }));
}

/**
 * Why a statement does not bind `mode`, or null when it does or names no table with a mode. It
 * binds it when it has at least one mode predicate (`livemode = ?`, `livemode = coalesce(?, …)`) or
 * writes a row's `livemode` from a parameter, and every one of them is bound to `mode`'s value.
 */
export function modeBindingProblem(statement: Ran, mode: Mode): string | null {
  const sql = withoutStrings(statement.sql);
  if (!NAMES.test(sql)) return null;
  const expected = livemodeOf(mode);
  const numbers = placeholderNumbers(sql);
  const bound: { what: string; number: number | undefined }[] = [];
  for (const match of sql.matchAll(PREDICATE)) {
    const at = match.index + match[0].length - (match[1]?.length ?? 0);
    bound.push({ what: match[0], number: numbers.get(at) });
  }
  for (const match of sql.matchAll(INSERT)) {
    const columns = (match[1] ?? "").split(",").map((column) => column.trim());
    const column = columns.indexOf("livemode");
    if (column < 0) return `it inserts a row without its livemode: ${oneLine(statement.sql)}`;
    const valuesAt = match.index + match[0].length;
    const value = topLevelList(sql.slice(valuesAt))[column];
    const placeholder = value && /^\?\d*(?=\s|$)/.test(value.expression);
    bound.push({
      what: `livemode ← ${value?.expression ?? "nothing"}`,
      number: placeholder ? numbers.get(valuesAt + value.at) : undefined,
    });
  }
  if (bound.length === 0) return `it binds no mode: ${oneLine(statement.sql)}`;
  for (const { what, number } of bound) {
    const value = number === undefined ? undefined : statement.params[number - 1];
    if (value !== expected) {
      return `${what} is bound to ${JSON.stringify(value)}, not ${expected} (${mode}): ${oneLine(statement.sql)}`;
    }
  }
  return null;
}

const oneLine = (sql: string) => sql.replace(/\s+/g, " ").trim();

/** The statements of `ran` that do not bind `mode`, each with why. */
export function unboundStatements(ran: Ran[], mode: Mode): string[] {
  return ran.flatMap((statement) => modeBindingProblem(statement, mode) ?? []);
}

/** How many of `ran` name a table whose rows have a mode. */
export function onModeTables(ran: Ran[]): number {
  return ran.filter((statement) => NAMES.test(withoutStrings(statement.sql))).length;
}

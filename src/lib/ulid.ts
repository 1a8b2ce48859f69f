import { ulid as makeUlid, monotonicFactory } from "ulidx";
import { z } from "zod";

// ULIDs: 48 bits of milliseconds and 80 random bits, in Crockford base32, upper case.
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
/** How a client may write one: ids are compared case-insensitively. */
export const ULID_PATTERN_ANY_CASE = new RegExp(ULID_PATTERN.source, "i");

export function ulid(now: number = Date.now()): string {
  return makeUlid(now);
}

/**
 * A maker of ids that stay in order even within one millisecond: for ids made in a loop (a batch
 * of events or attempts), whose order is the order they were made in.
 */
export function monotonicUlids(): (now?: number) => string {
  return monotonicFactory();
}

/** The canonical (upper-case) form of an id, or null when the text is not a ULID: the one rule. */
export function parseUlid(text: string | undefined | null): string | null {
  if (typeof text !== "string") return null;
  const upper = text.toUpperCase();
  return ULID_PATTERN.test(upper) ? upper : null;
}

/** A ULID in its canonical form, as queue messages carry them. */
export const CanonicalUlidSchema = z.string().refine((text) => parseUlid(text) === text, "not a canonical ULID");

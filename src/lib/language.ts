/**
 * Languages of captions and audio tracks: a BCP 47 language tag (RFC 5646), 2 to 35 letters,
 * digits and hyphens, compared case-insensitively and kept in its canonical case.
 */

/** BCP 47's tag for a language that is not known. */
export const UNDETERMINED = "und";

/** The bounds on a tag's length (docs/captions-and-embed.md). */
export const MIN_LANGUAGE_LENGTH = 2;
export const MAX_LANGUAGE_LENGTH = 35;

/**
 * The grandfathered tags of RFC 5646 §2.2.8, in the registry's spelling: they predate the
 * grammar (`i-klingon`, `zh-min-nan`) and are well-formed only as whole tags.
 */
const GRANDFATHERED = [
  "en-GB-oed",
  "i-ami",
  "i-bnn",
  "i-default",
  "i-enochian",
  "i-hak",
  "i-klingon",
  "i-lux",
  "i-mingo",
  "i-navajo",
  "i-pwn",
  "i-tao",
  "i-tay",
  "i-tsu",
  "sgn-BE-FR",
  "sgn-BE-NL",
  "sgn-CH-DE",
  "art-lojban",
  "cel-gaulish",
  "no-bok",
  "no-nyn",
  "zh-guoyu",
  "zh-hakka",
  "zh-min",
  "zh-min-nan",
  "zh-xiang",
];
const GRANDFATHERED_BY_LOWER = new Map(GRANDFATHERED.map((tag) => [tag.toLowerCase(), tag]));

// RFC 5646 §2.1's langtag, on a lower-cased tag:
//   language ["-" script] ["-" region] *("-" variant) *("-" extension) ["-" privateuse]
// with language = 2*3ALPHA ["-" extlang] / 4ALPHA / 5*8ALPHA and extlang = 3ALPHA *2("-" 3ALPHA).
const LANGTAG = new RegExp(
  "^(?<language>[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})" +
    "(?:-(?<script>[a-z]{4}))?" +
    "(?:-(?<region>[a-z]{2}|\\d{3}))?" +
    "(?<variants>(?:-(?:[a-z\\d]{5,8}|\\d[a-z\\d]{3}))*)" +
    "(?<extensions>(?:-[a-wyz\\d](?:-[a-z\\d]{2,8})+)*)" +
    "(?:-(?<privateuse>x(?:-[a-z\\d]{1,8})+))?$",
);
const PRIVATE_USE = /^x(?:-[a-z\d]{1,8})+$/;
const TAG_CHARACTERS = /^[A-Za-z\d-]+$/;

/**
 * The tag in its canonical case (RFC 5646 §2.1.1: script title case, region upper case, every other
 * subtag lower case), or null when `text` is not a well-formed tag of 2–35 characters. Only the
 * case changes: no alias is replaced (`iw` stays `iw`), so the tag a client sent is the tag it gets.
 */
export function canonicalLanguage(text: string): string | null {
  if (text.length < MIN_LANGUAGE_LENGTH || text.length > MAX_LANGUAGE_LENGTH || !TAG_CHARACTERS.test(text)) {
    return null;
  }
  const lower = text.toLowerCase();
  const grandfathered = GRANDFATHERED_BY_LOWER.get(lower);
  if (grandfathered) return grandfathered;
  if (PRIVATE_USE.test(lower)) return lower;
  const match = LANGTAG.exec(lower);
  if (!match?.groups) return null;
  const { language = "", script, region, variants = "", extensions = "", privateuse } = match.groups;
  // A variant or an extension's singleton may appear once (RFC 5646 §2.2.5, §2.2.6).
  if (hasRepeats(variants.split("-").slice(1))) return null;
  if (hasRepeats(singletons(extensions))) return null;
  return [
    language,
    script && `${script[0]?.toUpperCase()}${script.slice(1)}`,
    region?.toUpperCase(),
    variants.slice(1),
    extensions.slice(1),
    privateuse,
  ]
    .filter(Boolean)
    .join("-");
}

function hasRepeats(items: string[]): boolean {
  return new Set(items).size !== items.length;
}

/** The singletons of a run of extensions (`-u-ca-gregory-t-ja` → `u`, `t`). */
function singletons(extensions: string): string[] {
  return extensions
    .split("-")
    .slice(1)
    .filter((subtag) => subtag.length === 1);
}

const ENGLISH_NAMES = new Intl.DisplayNames(["en"], { type: "language", fallback: "none" });

/**
 * The language's English name (`pt-BR` → `Brazilian Portuguese`, `zh-Hant` → `Traditional
 * Chinese`), the default label of a track; the tag itself when the runtime's Unicode data has no
 * name for it (a private-use tag, a grandfathered one ECMA-402 does not take).
 */
export function englishName(language: string): string {
  try {
    return ENGLISH_NAMES.of(language) ?? language;
  } catch {
    // RangeError: a well-formed BCP 47 tag that is no Unicode locale identifier (`i-klingon`).
    return language;
  }
}

/**
 * The BCP 47 tag of a language a media file's metadata names with an ISO 639 code (`eng`, `fre`,
 * `fra` → `en`, `fr`, `fr`): BCP 47 takes a language's two-letter code where it has one, and the
 * runtime's Unicode data knows which (CLDR's language aliases, applied by `Intl`). Null for none,
 * `und`, or a code that is no language tag.
 */
export function languageOfCode(code: string | null | undefined): string | null {
  if (!code) return null;
  let tag: string | undefined;
  try {
    [tag] = Intl.getCanonicalLocales(code);
  } catch {
    return null;
  }
  const language = tag ? canonicalLanguage(tag) : null;
  return language === UNDETERMINED ? null : language;
}

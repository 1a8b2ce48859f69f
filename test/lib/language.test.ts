import { describe, expect, it } from "vitest";
import { canonicalLanguage, englishName, languageOfCode } from "../../src/lib/language";

describe("caption languages (BCP 47)", () => {
  it.each([
    ["en", "en"],
    ["EN", "en"],
    ["pt-br", "pt-BR"],
    ["PT-BR", "pt-BR"],
    ["zh-hant", "zh-Hant"],
    ["ZH-HANT-tw", "zh-Hant-TW"],
    ["es-419", "es-419"],
    ["sr-latn-rs", "sr-Latn-RS"],
    ["zh-yue-HK", "zh-yue-HK"],
    ["de-CH-1901", "de-CH-1901"],
    ["sl-rozaj-biske", "sl-rozaj-biske"],
    ["en-US-u-CA-Gregory", "en-US-u-ca-gregory"],
    ["en-a-BBB-x-A-CCC", "en-a-bbb-x-a-ccc"],
    ["X-Whatever", "x-whatever"],
    ["I-KLINGON", "i-klingon"],
    ["zh-MIN-nan", "zh-min-nan"],
    ["en-gb-OED", "en-GB-oed"],
    ["haw", "haw"],
    ["yue-Hant-HK", "yue-Hant-HK"],
    [
      `EN-${"A".repeat(8)}-${"B".repeat(8)}-${"C".repeat(8)}-DDDD1`,
      `en-${"a".repeat(8)}-${"b".repeat(8)}-${"c".repeat(8)}-dddd1`,
    ],
  ])("%s is well-formed, canonically %s", (tag, canonical) => {
    expect(canonicalLanguage(tag)).toBe(canonical);
  });

  it.each([
    ["", "empty"],
    ["e", "one letter"],
    ["a".repeat(36), "36 characters"],
    [`en-${"a".repeat(8)}-${"b".repeat(8)}-${"c".repeat(8)}-dddd12`, "36 characters, otherwise well-formed"],
    ["en_US", "an underscore"],
    ["en US", "a space"],
    ["en-", "a trailing hyphen"],
    ["-en", "a leading hyphen"],
    ["en--US", "an empty subtag"],
    ["e1", "a digit in the language"],
    ["abcdefghi", "a nine-letter language"],
    ["en-US-US", "a second region"],
    ["de-1901-1901", "a repeated variant"],
    ["en-a-bbb-a-ccc", "a repeated singleton"],
    ["en-a", "a singleton without subtags"],
    ["en-x", "private use without subtags"],
    ["en-abcdefghi", "a nine-character subtag"],
    ["pt-BR.vtt", "a dot"],
    ["ﬁ", "a character outside ASCII"],
    ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "a ULID"],
  ])("refuses %j (%s)", (tag) => {
    expect(canonicalLanguage(tag)).toBeNull();
  });

  it("names a language in English, through the runtime's Intl.DisplayNames", () => {
    expect(englishName("pt-BR")).toBe("Brazilian Portuguese");
    expect(englishName("en")).toBe("English");
    expect(englishName("zh-Hant")).toBe("Traditional Chinese");
    expect(englishName("fr-CA")).toBe("Canadian French");
    expect(englishName("de")).toBe("German");
    expect(englishName("es-419")).toBe("Latin American Spanish");
    expect(englishName("ja")).toBe("Japanese");
  });

  it("falls back to the tag where no name is known or the tag is no Unicode locale", () => {
    expect(englishName("x-whatever")).toBe("x-whatever");
    expect(englishName("i-klingon")).toBe("i-klingon");
    expect(englishName("qaa")).toBe("qaa");
  });

  it("reads a media file's ISO 639 code as the tag BCP 47 takes for it, in the Workers runtime", () => {
    for (const [code, tag] of [
      ["eng", "en"],
      ["fre", "fr"],
      ["fra", "fr"],
      ["ger", "de"],
      ["chi", "zh"],
      ["jpn", "ja"],
      ["haw", "haw"],
      ["en", "en"],
    ]) {
      expect(languageOfCode(code), code).toBe(tag);
    }
    for (const none of [null, undefined, "", "und", "e!"]) expect(languageOfCode(none)).toBeNull();
  });
});

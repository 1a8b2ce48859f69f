import { describe, expect, it } from "vitest";
import { headingAnchors, missingDocCitations, outsideCitations } from "../../scripts/outside-citations.mjs";

// The citations are spelled in pieces so that this file, which the check reads too, cites nothing.
const SIGN = "\u00a7";
const CONTRACT = "contract";
const SECTION = "section";
const GONE = "gone";

describe("the citations check (npm run arch)", () => {
  it("finds a rule cited from a document outside the repository, with its line", () => {
    const text = [
      `/** At most 4 KiB (${CONTRACT} ${SECTION} 20); more is invalid_body. */`,
      `// Test mode (${CONTRACT} ${SIGN}16): a key sees its own mode.`,
      ` * the renditions of a source (${CONTRACT}`,
      ` * ${SECTION} 12), lowest first`,
      `/** Keys kept this long (${SIGN}14). */`,
      `- as the order of ${SECTION} 3 says`,
      `// One secret per purpose (STYLE${".md"} 16, STYLE${" rule"} 16).`,
      `// See ..${"/shared"}/spec/${CONTRACT}.md`,
      `/** Read in the ${CONTRACT}'s order, with the ${CONTRACT}'s codes (${CONTRACT}: 5 s). */`,
      `  // the poster (${CONTRACT} ${SECTION}`,
      `  // 12); a frame (${SECTION}`,
      `  // 17)`,
    ].join("\n");
    expect(outsideCitations(text).map(({ line, kind }) => [line, kind])).toEqual([
      [1, "the contract by section"],
      [2, "the contract by section"],
      [3, "the contract by section"],
      [5, "a section sign"],
      [6, "a numbered section"],
      [7, "the style guide"],
      [7, "the style guide"],
      [8, "the shared folder"],
      [9, "the contract as a document"],
      [9, "the contract as a document"],
      [9, "the contract as a document"],
      [10, "the contract by section"],
      [11, "a numbered section"],
    ]);
  });

  it("passes rules said in the repository's words or cited from docs/, and public standards' sections", () => {
    const text = [
      "/** At most 4 KiB (docs/analytics.md#what-it-promises); more is invalid_body. */",
      `// HTTP conditional requests (RFC 9110 ${SIGN}13.2.2), a language tag (RFC 5646 ${SIGN}2.2.5, ${SIGN}2.2.6)`,
      ` * its segment (RFC 8216`,
      ` * ${SIGN}3.5); cue settings (WebVTT ${SIGN}4.4)`,
      "const STYLE = /^STYLE[ \\t]*$/; // WebVTT style blocks",
      "// The queue's contract: one message a video.",
    ].join("\n");
    expect(outsideCitations(text)).toEqual([]);
  });

  it("names each heading's anchor as GitHub does, numbering repeats and skipping code", () => {
    const page = "# Using the API\n## Test mode, and going live\n```sh\n# not a heading\n```\n## Tests\n## Tests\n";
    expect([...headingAnchors(page)]).toEqual(["using-the-api", "test-mode-and-going-live", "tests", "tests-1"]);
  });

  it("finds a citation of a docs/ page or heading that is not there, in code and in Markdown links", () => {
    const pages = new Map([["docs/api-rules.md", new Set(["text-fields"])]]);
    const code = `// (docs/api-rules.md#text-fields) and docs/api-rules.md, not docs/api-rules.md#ids nor docs/${GONE}.md`;
    expect(missingDocCitations("src/a.ts", code, pages)).toEqual([
      { line: 1, text: "docs/api-rules.md#ids", kind: "a heading the page does not have" },
      { line: 1, text: `docs/${GONE}.md`, kind: "a page docs/ does not have" },
    ]);
    const markdown = `[rules](api-rules.md#text-fields), [gone](api-rules.md#${GONE})\n[self](#${GONE}-too)`;
    expect(missingDocCitations("docs/api-rules.md", markdown, pages)).toEqual([
      { line: 1, text: `docs/api-rules.md#${GONE}`, kind: "a heading the page does not have" },
      { line: 2, text: `docs/api-rules.md#${GONE}-too`, kind: "a heading the page does not have" },
    ]);
    expect(missingDocCitations("README.md", "[rules](docs/api-rules.md#text-fields)", pages)).toEqual([]);
    // From a folder, a link is relative to it: `docs/` from media-plan/ is media-plan/docs/.
    const files = new Set(["media-plan/README.md", "docs/api-rules.md"]);
    expect(
      missingDocCitations("media-plan/README.md", "[a](../docs/api-rules.md), [b](docs/api-rules.md)", pages, files),
    ).toEqual([{ line: 1, text: "media-plan/docs/api-rules.md", kind: "a file the repository does not have" }]);
  });
});

// The citations check (`npm run arch`): the repository explains itself (docs/conventions.md,
// "Every rule is in the repository"), so no tracked file cites a document the repository does not
// hold. Two kinds of citation fail:
// - one of a document from outside: a rule cited by its section number with no standard named
//   beside it (public standards such as "RFC 9110 §13" are cited by their own numbering), the
//   style guide or the shared folder the service was first specified in, or "the contract" as a
//   document;
// - one of a page of docs/ that is not there, or of a heading that page does not have
//   (`docs/api-rules.md#text-fields`, and a Markdown page's relative links such as
//   `[Images](images.md#what-it-promises)`).

/** Citations of documents from outside the repository, each with what it is. */
const OUTSIDE = [
  { kind: "the contract by section", pattern: /\bcontract(?:'s)?[\s*#/-]*(?:sections?[\s*#/-]*\d+|§\s?\d*)/gi },
  { kind: "a section sign", pattern: /§\s?\d/g, unlessAfterStandard: true },
  { kind: "a numbered section", pattern: /\bsections?\s+(?:(?:\*|\/\/|#|--)\s*)?\d+\b/gi, unlessAfterStandard: true },
  { kind: "the style guide", pattern: /\bSTYLE(?:\.md|\s+rules?\s*\d)/g },
  { kind: "the shared folder", pattern: /\.\.\/shared\b|\bshared\/spec\b|\bservice-spec\b/g },
  {
    kind: "the contract as a document",
    pattern:
      /\bthe contract's\b|\(contract[:;,)]|\b(?:as|what|than|of) the contract\b|\bthe contract (?:says|asks|allows|names|lists|puts|refuses|accepts|requires|does)\b/gi,
  },
];

/** A public standard named just before a section number cites that standard's own sections. */
const STANDARD_BEFORE = /\b(?:RFC|BCP|ISO|ECMA-?)\s?\d+\b(?:[^.;:]|\.(?=\d)){0,24}$|\bWebVTT\b[^.;:]{0,8}$/;

/** What `text` cites from outside the repository: one entry per citation, with its line (from 1). */
export function outsideCitations(text) {
  const found = [];
  for (const { kind, pattern, unlessAfterStandard } of OUTSIDE) {
    for (const match of text.matchAll(pattern)) {
      // Comment markers and line breaks between a standard's name and its section do not part them.
      const before = text
        .slice(Math.max(0, match.index - 60), match.index)
        .replace(/\s*(?:\*|\/\/|#|--)?\s*\n\s*(?:\*|\/\/|#|--)?\s*/g, " ");
      if (unlessAfterStandard && STANDARD_BEFORE.test(before)) continue;
      const end = match.index + match[0].length;
      // One citation is reported once, by the first pattern that finds it.
      if (found.some((other) => other.start < end && match.index < other.end)) continue;
      found.push({ start: match.index, end, kind, text: match[0] });
    }
  }
  return found
    .sort((a, b) => a.start - b.start)
    .map(({ start, kind, text: cited }) => ({ line: lineOf(text, start), kind, text: cited }));
}

function lineOf(text, index) {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}

/**
 * The anchor of each heading of a Markdown page, as GitHub makes them: lower case, punctuation
 * dropped, spaces as hyphens, a repeated heading numbered (`-1`, `-2`). Code fences hold no heading.
 */
export function headingAnchors(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/**
 * The citations in `text` (the file at `file`, relative to the repository) of a page of docs/ that
 * `pages` does not have, or of a heading its page does not have; and, in a Markdown file, the links
 * to another Markdown file of the repository that `files` (every file's path) does not hold.
 * `pages` maps each page's path (`docs/api-rules.md`) to its anchors (`headingAnchors`).
 */
export function missingDocCitations(file, text, pages, files = new Set()) {
  const cited = [];
  for (const match of text.matchAll(/(?<![\w./-]|\]\()docs\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
    cited.push({ index: match.index, page: `docs/${match[1]}`, anchor: match[2] });
  }
  if (file.endsWith(".md")) {
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
    for (const match of text.matchAll(/\]\((?!https?:|\/|#)([\w./-]+\.md)(?:#([\w-]+))?\)/g)) {
      const page = resolve(folder + match[1]);
      if (page.startsWith("docs/") && !page.slice(5).includes("/")) {
        cited.push({ index: match.index, page, anchor: match[2] });
      } else if (!files.has(page)) {
        cited.push({ index: match.index, page, anchor: match[2], file: true });
      }
    }
    for (const match of text.matchAll(/\]\(#([\w-]+)\)/g)) {
      if (file.startsWith("docs/")) cited.push({ index: match.index, page: file, anchor: match[1] });
    }
  }
  return cited
    .filter(({ page, anchor, file: other }) =>
      other ? true : !pages.has(page) || (anchor !== undefined && !pages.get(page).has(anchor)),
    )
    .map(({ index, page, anchor, file: other }) => ({
      line: lineOf(text, index),
      text: anchor === undefined ? page : `${page}#${anchor}`,
      kind: other
        ? "a file the repository does not have"
        : pages.has(page)
          ? "a heading the page does not have"
          : "a page docs/ does not have",
    }));
}

function resolve(path) {
  const parts = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

#!/usr/bin/env node
// `npm run arch`: the import graph (dependency-cruiser, .dependency-cruiser.cjs) and three rules it
// cannot see: no two folders of src/ import each other, even through other files
// (scripts/folder-cycles.mjs); SQL for D1 is prepared only in query modules (`queries.ts`,
// `*-queries.ts`); every statement there on a table whose rows have a mode binds one
// (scripts/mode-scoping.mjs); docs/architecture.md maps every folder and path (scripts/docs-homes.mjs);
// and no tracked file cites a document the repository does not hold (scripts/outside-citations.mjs).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { loadApp } from "./app-in-node.mjs";
import { missingHomes } from "./docs-homes.mjs";
import { folderCycles } from "./folder-cycles.mjs";
import { checkModeScoping, MODE_TABLES } from "./mode-scoping.mjs";
import { headingAnchors, missingDocCitations, outsideCitations } from "./outside-citations.mjs";

// One run of dependency-cruiser: its rules' violations and the graph the folder check reads.
const cruised = spawnSync("depcruise", ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"], {
  maxBuffer: 256 * 1024 * 1024,
  stdio: ["ignore", "pipe", "inherit"],
});
if (cruised.status !== 0) process.exit(cruised.status ?? 1);
const { summary, modules } = JSON.parse(cruised.stdout.toString("utf8"));
const violations = summary.violations.filter((violation) => violation.rule.severity === "error");
if (violations.length > 0) {
  const comments = new Map(summary.ruleSetUsed.forbidden.map((rule) => [rule.name, rule.comment]));
  for (const { rule, from, to, cycle } of violations) {
    const path = cycle ? [from, ...cycle.map((step) => step.name ?? step)].join(" → ") : `${from} → ${to}`;
    console.error(`  error ${rule.name}: ${path}${comments.get(rule.name) ? `\n    ${comments.get(rule.name)}` : ""}`);
  }
  console.error(`x ${violations.length} dependency violations`);
  process.exit(1);
}
console.log(
  `✔ no dependency violations found (${summary.totalCruised} modules, ${summary.totalDependenciesCruised} dependencies cruised)`,
);

const cycles = folderCycles(modules);
if (cycles.length > 0) {
  console.error(
    "Folders of src/ that import each other (move the shared piece down, or pass it in: docs/conventions.md#the-import-graph-reads-top-down):",
  );
  for (const { folders, imports } of cycles) console.error(`  ${folders.join(", ")}:\n    ${imports.join("\n    ")}`);
  process.exit(1);
}
console.log("✔ no folder of src/ imports another that imports it back");

const files = readdirSync("src", { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
  .map((entry) => path.join(entry.parentPath, entry.name));
const isQueryModule = (file) => /(^|[-/])queries\.ts$/.test(path.basename(file)) || /-queries\.ts$/.test(file);
const outside = files.filter((file) => !isQueryModule(file) && /\.prepare\(/.test(readFileSync(file, "utf8")));
if (outside.length > 0) {
  console.error(`SQL outside a query module (move it to the capability's queries): ${outside.join(", ")}`);
  process.exit(1);
}
console.log(`✔ D1 statements are prepared only in query modules (${files.filter(isQueryModule).length} of them)`);

const checks = files.filter(isQueryModule).map((file) => checkModeScoping(file, readFileSync(file, "utf8")));
const problems = checks.flatMap((check) => check.problems);
if (problems.length > 0) {
  console.error(
    `A statement on ${MODE_TABLES.join(", ")} that binds no mode (docs/api-guide.md#test-mode-and-going-live, src/lib/tenant.ts):`,
  );
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
const scoped = checks.flatMap((check) => check.scoped).length;
const allModes = checks.flatMap((check) => check.allModes).length;
console.log(
  `✔ every statement on ${MODE_TABLES.join(", ")} binds a mode: ${scoped} query functions bind their tenant's, ` +
    `${allModes} act for every mode and say why`,
);

// The map of the code (docs/architecture.md) names every folder of src/ and every path served.
const { createApp } = await loadApp();
const served = createApp()
  .routes.filter((route) => route.method !== "ALL" && route.method !== "OPTIONS")
  .map((route) => route.path);
const entries = readdirSync("src", { withFileTypes: true }).map(
  (entry) => `${entry.name}${entry.isDirectory() ? "/" : ""}`,
);
const missing = missingHomes(readFileSync("docs/architecture.md", "utf8"), { entries, paths: served });
if (missing.folders.length > 0 || missing.routes.length > 0) {
  if (missing.folders.length > 0) {
    console.error(`docs/architecture.md does not name: ${missing.folders.map((entry) => `src/${entry}`).join(", ")}`);
  }
  if (missing.routes.length > 0) {
    console.error(`docs/architecture.md's route table does not list: ${missing.routes.join(", ")}`);
  }
  process.exit(1);
}
console.log(
  `✔ docs/architecture.md names every folder of src/ (${entries.length}) and every path served (${new Set(served).size})`,
);

// Every rule is in the repository: no file of the checkout (tracked, or new and not ignored) cites a
// document from outside, nor a page or heading of docs/ that is not there.
const tracked = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  maxBuffer: 64 * 1024 * 1024,
});
if (tracked.status !== 0) {
  console.error("git ls-files failed: the citations check reads the tracked files of a checkout");
  process.exit(1);
}
const texts = tracked.stdout
  .toString("utf8")
  .split("\0")
  .filter((file) => file !== "")
  .map((file) => {
    try {
      return { file, bytes: readFileSync(file) };
    } catch {
      return null; // deleted from the work tree, not yet from the index
    }
  })
  .filter((entry) => entry !== null && !entry.bytes.subarray(0, 8000).includes(0))
  .map(({ file, bytes }) => ({ file, text: bytes.toString("utf8") }));
const paths = new Set(texts.map(({ file }) => file));
const pages = new Map(
  texts.filter(({ file }) => /^docs\/[^/]+\.md$/.test(file)).map(({ file, text }) => [file, headingAnchors(text)]),
);
const citations = texts.flatMap(({ file, text }) =>
  [...outsideCitations(text), ...missingDocCitations(file, text, pages, paths)].map((found) => ({ file, ...found })),
);
if (citations.length > 0) {
  console.error("Citations of what the repository does not hold (say the rule, or cite the docs/ page that holds it):");
  for (const { file, line, kind, text } of citations) {
    console.error(`  ${file}:${line}: ${kind}: ${text.replace(/\s+/g, " ")}`);
  }
  process.exit(1);
}
console.log(`✔ no tracked file (${texts.length}) cites a document the repository does not hold`);

#!/usr/bin/env node
// Copies the static files the Worker serves from npm packages into public/vendor/ (gitignored),
// which wrangler.toml's [assets] serves beside the Worker. `npm run dev`, `npm test` and `npm run
// deploy` run it first (`npm run dev` through scripts/dev.mjs, the others as pre-scripts), and
// vitest.config.ts too, so a fresh clone needs only
// `npm install`. To serve another vendored file, add one line to VENDORED: the file in
// node_modules, and the path it is served at under /vendor/.
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
export const ASSETS_DIRECTORY = path.join(root, "public");
const VENDOR = path.join(ASSETS_DIRECTORY, "vendor");

/** [file in node_modules, path under /vendor/]. */
export const VENDORED: [from: string, to: string][] = [
  // The /docs reference page (src/http/docs.ts): Scalar's self-contained browser build.
  ["@scalar/api-reference/dist/browser/standalone.js", "scalar/api-reference.js"],
  // The embed page's player (src/playback/embed-routes.ts): hls.js's light build.
  ["hls.js/dist/hls.light.min.js", "hls/hls.light.min.js"],
];

/** Copies every vendored file whose copy is missing or older, and removes files no longer listed. */
export function buildAssets() {
  mkdirSync(VENDOR, { recursive: true });
  const wanted = new Set<string>();
  for (const [from, to] of VENDORED) {
    const source = path.join(root, "node_modules", from);
    const target = path.join(VENDOR, to);
    wanted.add(target);
    const sourceTime = statSync(source).mtimeMs; // throws, naming the file, when the package is missing
    let targetTime = -1;
    try {
      targetTime = statSync(target).mtimeMs;
    } catch {}
    if (targetTime >= sourceTime) continue;
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(source, target);
  }
  for (const entry of readdirSync(VENDOR, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && !wanted.has(file)) rmSync(file);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildAssets();

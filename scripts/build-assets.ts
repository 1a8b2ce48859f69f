#!/usr/bin/env node
// Builds the static files the Worker serves from npm packages into public/vendor/ (gitignored),
// which wrangler.toml's [assets] serves beside the Worker. `npm run dev`, `npm test` and `npm run
// deploy` run it first (`npm run dev` through scripts/dev.mjs, the others as pre-scripts), and
// vitest.config.ts too, so a fresh clone needs only `npm install`. To serve another vendored file,
// add one line to VENDORED (the file in node_modules, and the path it is served at under /vendor/);
// to serve packages that a browser cannot load as they are published (bare imports), one entry to
// BUNDLED, which esbuild bundles into one file.
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
export const ASSETS_DIRECTORY = path.join(root, "public");
const VENDOR = path.join(ASSETS_DIRECTORY, "vendor");

/** [file in node_modules, path under /vendor/]. */
export const VENDORED: [from: string, to: string][] = [
  // The /docs reference page (src/http/docs.ts): Scalar's self-contained browser build.
  ["@scalar/api-reference/dist/browser/standalone.js", "scalar/api-reference.js"],
  // hls.js's light build, for customers' own pages (the README's "Play it" example).
  ["hls.js/dist/hls.light.min.js", "hls/hls.light.min.js"],
];

type Bundle = {
  /** The modules the bundle imports for their effects (custom elements register themselves). */
  imports: string[];
  /** The packages whose versions make the bundle: a newer install of any rebuilds it. */
  packages: string[];
  /** This repository's own source files it bundles: an edit to any rebuilds it. */
  sources?: string[];
  /** Module substitutions, as esbuild's `alias`. */
  alias?: Record<string, string>;
  /** Its path under /vendor/. */
  to: string;
};

/** What the embed page's two players are made of. */
const PLAYER = {
  imports: ["media-chrome", "media-chrome/menu", "hls-video-element"],
  packages: ["media-chrome", "hls-video-element", "custom-media-element", "media-tracks", "hls.js"],
};

export const BUNDLED: Bundle[] = [
  // The embed page's player (src/playback/embed-routes.ts): Media Chrome's controls and menus
  // around hls-video-element, whose hls.js is the light build: captions come from the page's
  // <track> elements, so the full build's subtitle, alternate audio and DRM code would go unused.
  { ...PLAYER, alias: { "hls.js/dist/hls.mjs": "hls.js/dist/hls.light.mjs" }, to: "player/player.js" },
  // The same player with hls.js's full build, for the pages of videos with added audio tracks,
  // which only that build plays (docs/audio-tracks.md): 67 kB more, gzipped, paid by those alone.
  { ...PLAYER, to: "player/player-audio.js" },
  // The embed page's viewing beacons (player/beacons.ts; docs/analytics.md).
  {
    imports: ["./player/beacons.ts"],
    packages: [],
    sources: ["player/beacons.ts"],
    to: "player/beacons.js",
  },
];

/**
 * The dashboard (docs/dashboard.md, `dashboard/`): its Preact views, typed API client and tus
 * uploads bundled into one script and one stylesheet, served under /vendor/dashboard/ to the page
 * src/dashboard/page.ts answers at /dashboard.
 */
export const DASHBOARD = {
  entry: path.join(root, "dashboard/main.tsx"),
  sources: path.join(root, "dashboard"),
  packages: ["preact", "openapi-fetch", "tus-js-client"],
  to: "dashboard/dashboard.js",
  style: "dashboard/dashboard.css",
};

/** The newest modification time of the dashboard's own files (its tests excepted). */
function dashboardSourcesModified(): number {
  let newest = -1;
  for (const entry of readdirSync(DASHBOARD.sources, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith(".test.ts")) continue;
    newest = Math.max(newest, modified(path.join(entry.parentPath, entry.name)));
  }
  return newest;
}

function buildDashboard(wanted: Set<string>) {
  const target = path.join(VENDOR, DASHBOARD.to);
  const style = path.join(VENDOR, DASHBOARD.style);
  wanted.add(target);
  wanted.add(style);
  const inputs = [
    modified(fileURLToPath(import.meta.url)),
    dashboardSourcesModified(),
    ...DASHBOARD.packages.map((name) => modified(path.join(root, "node_modules", name, "package.json"))),
  ];
  if (Math.min(modifiedOrNever(target), modifiedOrNever(style)) >= Math.max(...inputs)) return;
  buildSync({
    entryPoints: [DASHBOARD.entry],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    outfile: target,
    logLevel: "warning",
  });
}

const modified = (file: string) => statSync(file).mtimeMs; // throws, naming the file, when it is missing

function modifiedOrNever(file: string): number {
  try {
    return modified(file);
  } catch {
    return -1;
  }
}

/**
 * Copies every vendored file whose copy is missing or older, bundles every bundle that is missing
 * or older than its packages (or this script), and removes files no longer listed.
 */
export function buildAssets() {
  mkdirSync(VENDOR, { recursive: true });
  const wanted = new Set<string>();
  for (const [from, to] of VENDORED) {
    const source = path.join(root, "node_modules", from);
    const target = path.join(VENDOR, to);
    wanted.add(target);
    if (modifiedOrNever(target) >= modified(source)) continue;
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(source, target);
  }
  for (const bundle of BUNDLED) {
    const target = path.join(VENDOR, bundle.to);
    wanted.add(target);
    const inputs = [
      fileURLToPath(import.meta.url),
      ...bundle.packages.map((name) => path.join(root, "node_modules", name, "package.json")),
      ...(bundle.sources ?? []).map((file) => path.join(root, file)),
    ];
    if (modifiedOrNever(target) >= Math.max(...inputs.map(modified))) continue;
    buildSync({
      stdin: { contents: bundle.imports.map((name) => `import ${JSON.stringify(name)};`).join("\n"), resolveDir: root },
      bundle: true,
      minify: true,
      format: "iife",
      target: "es2022",
      alias: bundle.alias ?? {},
      outfile: target,
      logLevel: "warning",
    });
  }
  buildDashboard(wanted);
  for (const entry of readdirSync(VENDOR, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && !wanted.has(file)) rmSync(file);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildAssets();

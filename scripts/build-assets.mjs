#!/usr/bin/env node
// The Worker's static assets (wrangler.toml `[assets]`): files taken from npm packages, copied into
// .assets/ so they are served from our own origin, never a CDN. Runs after `npm install` and before
// `npm run dev`, the tests and a deploy. One line per file: [package file, path under .assets/].
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, "..");

export const ASSETS = [
  // The embed page's player (src/playback/embed-routes.ts, PLAYER_SCRIPT).
  ["hls.js/dist/hls.light.min.js", "player/hls.light.min.js"],
];

for (const [from, to] of ASSETS) {
  const target = path.join(root, ".assets", to);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(require.resolve(from), target);
}

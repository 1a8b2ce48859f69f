#!/usr/bin/env node
// The registry these machines reach serves only some platforms' builds of packages such as
// workerd and Biome, so `npm install` here leaves the other platforms' optional packages out of
// package-lock.json, and `npm ci` then refuses the lock. This adds those entries back, marked
// optional and with their platform, so they stay inert on Linux and install normally elsewhere.
// Run it after `npm install` whenever the lock changes: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;

function platform(name) {
  const entry = {};
  if (name.includes("darwin")) entry.os = ["darwin"];
  else if (name.includes("win32") || name.includes("windows")) entry.os = ["win32"];
  else if (name.includes("android")) entry.os = ["android"];
  else if (name.includes("linux")) entry.os = ["linux"];
  if (name.includes("arm64")) entry.cpu = ["arm64"];
  else if (name.includes("x64") || name.endsWith("-64")) entry.cpu = ["x64"];
  if (name.includes("musl")) entry.libc = ["musl"];
  return entry;
}

const added = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = path ? `${path}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    if (!/^\d+\.\d+\.\d+/.test(version)) continue; // a range: npm resolved it elsewhere
    packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platform(name),
    };
    added.push(`${name}@${version}`);
  }
}
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `added: ${added.join(", ")}` : "package-lock.json already complete");

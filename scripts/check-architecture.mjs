#!/usr/bin/env node
// `npm run arch`: the import graph (dependency-cruiser, .dependency-cruiser.cjs) and the one rule it
// cannot see: SQL for D1 is prepared only in query modules (`queries.ts`, `*-queries.ts`).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const graph = spawnSync("depcruise", ["src", "--config", ".dependency-cruiser.cjs"], { stdio: "inherit" });
if (graph.status !== 0) process.exit(graph.status ?? 1);

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

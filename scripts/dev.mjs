#!/usr/bin/env node
// `npm run dev [-- wrangler dev options]`: prepares local state, then serves the API with every
// binding (D1, R2, Durable Objects, Queues) embedded. Defaults to http://127.0.0.1:8787.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index === -1) return undefined;
  return args[index].includes("=") ? args[index].split("=")[1] : args[index + 1];
};

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example");
}

const persist = option("--persist-to");
const migrate = spawnSync(
  "wrangler",
  ["d1", "migrations", "apply", "DB", "--local", ...(persist ? ["--persist-to", persist] : [])],
  { stdio: "inherit", env: { WRANGLER_SEND_METRICS: "false", ...process.env, CI: "true" } },
);
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const defaults = [];
if (!option("--ip")) defaults.push("--ip", "127.0.0.1");
if (!option("--port")) defaults.push("--port", "8787");
const dev = spawn("wrangler", ["dev", ...defaults, ...args], {
  stdio: "inherit",
  env: { WRANGLER_SEND_METRICS: "false", ...process.env },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

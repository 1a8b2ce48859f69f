#!/usr/bin/env node
// `npm run dev [-- wrangler dev options]`: prepares local state, then serves the API with every
// binding (D1, R2, Durable Objects, Queues) embedded. Defaults to http://127.0.0.1:8787.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, readFileSync } from "node:fs";

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (index === -1) return undefined;
  return args[index].includes("=") ? args[index].split("=")[1] : args[index + 1];
};

/** The variable a `.dev.vars` line sets, if it sets one. */
const keyOf = (line) => /^\s*([A-Z_][A-Z0-9_]*)\s*=/.exec(line)?.[1];
const linesOf = (file) => readFileSync(file, "utf8").split("\n");
if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example");
} else {
  // A variable added since .dev.vars was made gets its development default.
  const have = new Set(linesOf(".dev.vars").map(keyOf));
  const missing = linesOf(".dev.vars.example").filter((line) => keyOf(line) && !have.has(keyOf(line)));
  if (missing.length > 0) {
    appendFileSync(".dev.vars", `\n${missing.join("\n")}\n`);
    console.log(`Added to .dev.vars from .dev.vars.example: ${missing.map((line) => line.split("=")[0]).join(", ")}`);
  }
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

// wrangler dev never fires cron triggers; production's runs every minute, so do the same here.
const host = option("--ip") ?? "127.0.0.1";
const port = option("--port") ?? "8787";
const tick = setInterval(() => {
  fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}/cdn-cgi/local/scheduled`)
    .then((response) => response.body?.cancel())
    .catch(() => {}); // not listening yet, or restarting: the next tick tries again
}, 60_000);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", () => clearInterval(tick));
dev.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

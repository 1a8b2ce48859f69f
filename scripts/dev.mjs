#!/usr/bin/env node
// `npm run dev [-- wrangler dev options]`: prepares local state, then serves the API with every
// binding (D1, R2, Durable Objects, Queues) embedded, and runs the encoder (encoder/) beside it as a
// plain process, restarted if it dies. Defaults to http://127.0.0.1:8787.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, copyFileSync, existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { freePort } from "./free-port.mjs";

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

spawnSync(process.execPath, ["scripts/build-assets.ts"], { stdio: "inherit" });

const persist = option("--persist-to");
const migrate = spawnSync(
  "wrangler",
  ["d1", "migrations", "apply", "DB", "--local", ...(persist ? ["--persist-to", persist] : [])],
  { stdio: "inherit", env: { WRANGLER_SEND_METRICS: "false", ...process.env, CI: "true" } },
);
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const host = option("--ip") ?? "127.0.0.1";
const port = option("--port") ?? "8787";
const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

/** ENCODER_PORT when set, else a port nobody listens on now. */
function encoderPort() {
  return process.env.ENCODER_PORT ? Promise.resolve(Number(process.env.ENCODER_PORT)) : freePort();
}

// The encoder: the same program the production container runs, reached through ENCODER_URL and
// calling back to this server. If it dies (a crash, a kill), it is started again on the same port;
// the Worker's coordinators take over the jobs it was running. Its job API wants a token: a new
// one each run, given to both. It runs one background job fewer than the machine has cores (at
// least one; twice as many interactive ones), and the Worker's pool hands out that many slots of
// each. The core left over is the Worker's and a viewer's: with every core on background runs, a
// viewer's segment at 90% of a 10-minute 720p source took 12.2 s on a 2-core machine (three runs,
// 11.4-12.9 s; docs/encoding.md#long-videos-playable-in-seconds says 10 s), as the Worker that
// serves every run its source and the viewer's own job shared what the niced background left.
// ENCODER_JOBS sets the number.
const encoderAt = await encoderPort();
const encoderToken = process.env.ENCODER_TOKEN || randomBytes(32).toString("base64url");
const slots = String(Math.max(1, Number(process.env.ENCODER_JOBS) || availableParallelism() - 1));
// Interactive jobs (probes, a viewer's segments) are short and run first (background ones are
// niced): twice as many places.
const interactiveSlots = String(2 * Number(slots));
let stopping = false;
let encoder;
function startEncoder() {
  encoder = spawn(process.execPath, ["encoder/server.mjs"], {
    stdio: "inherit",
    env: {
      ...process.env,
      ENCODER_PORT: String(encoderAt),
      ENCODER_HOST: "127.0.0.1",
      ENCODER_TOKEN: encoderToken,
      ENCODER_BACKGROUND_JOBS: slots,
      ENCODER_INTERACTIVE_JOBS: interactiveSlots,
    },
  });
  console.log(`[dev] encoder pid ${encoder.pid} on http://127.0.0.1:${encoderAt}`);
  encoder.on("exit", (code, signal) => {
    if (stopping) return;
    console.log(`[dev] encoder exited (${signal ?? code}); starting it again`);
    setTimeout(startEncoder, 500);
  });
}
startEncoder();

const defaults = [];
if (!option("--ip")) defaults.push("--ip", "127.0.0.1");
if (!option("--port")) defaults.push("--port", "8787");
const encoderVars = [
  ["ENCODER_URL", `http://127.0.0.1:${encoderAt}`],
  ["ENCODER_CALLBACK_URL", origin],
  ["ENCODER_TOKEN", encoderToken],
  ["ENCODER_SLOTS", slots],
  ["ENCODER_INTERACTIVE_SLOTS", interactiveSlots],
  ["ENCODER_VIDEO_SLOTS", slots],
].flatMap(([name, value]) => ["--var", `${name}:${value}`]);
// --local: no binding reaches Cloudflare. wrangler reaches the AI binding only with an account; without
// this flag, offline, it fails to start ("Failed to start the remote proxy session"). With it the
// binding is there but cannot run, and SPEECH_ENGINE=encoder (.dev.vars) hears speech instead
// (docs/generated-captions.md). `--remote` (the whole Worker on Cloudflare) is left as asked.
if (!args.includes("--remote") && !args.includes("-r")) defaults.push("--local");
const dev = spawn("wrangler", ["dev", ...defaults, ...encoderVars, ...args], {
  stdio: "inherit",
  env: { WRANGLER_SEND_METRICS: "false", ...process.env },
});

// wrangler dev never fires cron triggers; production's runs every minute, so do the same here.
const tick = setInterval(() => {
  fetch(`${origin}/cdn-cgi/local/scheduled`)
    .then((response) => response.body?.cancel())
    .catch(() => {}); // not listening yet, or restarting: the next tick tries again
}, 60_000);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopping = true;
    encoder.kill(signal);
    dev.kill(signal);
  });
}
dev.on("exit", () => {
  clearInterval(tick);
  stopping = true;
  encoder.kill("SIGTERM");
});
dev.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

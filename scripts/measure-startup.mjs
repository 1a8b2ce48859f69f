#!/usr/bin/env node
// `node scripts/measure-startup.mjs [runs]`: the Worker's startup cost, as Cloudflare counts it
// (parsing the bundle and running its top-level code), measured in fresh Node processes: builds
// the bundle as `wrangler deploy --dry-run` does, then times `import()` of it `runs` times (default
// 15), each in a new process with `cloudflare:workers` replaced by a stub, and prints the size and the
// median and spread. V8 is the engine of both Node and workerd, so the figure moves with the
// Worker's; it is not the edge's absolute number (`wrangler deploy` prints that one).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";

const runs = Number(process.argv[2] ?? 15);
const out = mkdtempSync(path.join(tmpdir(), "startup-"));
try {
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", out, "--containers-rollout=none"], {
    stdio: "ignore",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  // The one platform module the bundle imports, replaced by a stub Node can load.
  const stub = path.join(out, "cloudflare-workers-stub.mjs");
  writeFileSync(stub, "export class DurableObject {}\nexport class WorkerEntrypoint {}\nexport const env = {};\n");
  let built = readFileSync(path.join(out, "index.js"), "utf8");
  // The WebAssembly modules (the image decoders) are compiled when the Worker starts, as workerd
  // does: each import becomes a module that compiles its bytes.
  for (const file of readdirSync(out).filter((name) => name.endsWith(".wasm"))) {
    const compiled = path.join(out, `${file}.mjs`);
    writeFileSync(
      compiled,
      `import { readFileSync } from "node:fs";\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(path.join(out, file))}));\n`,
    );
    built = built.replaceAll(JSON.stringify(`./${file}`), JSON.stringify(compiled));
  }
  const bundle = path.join(out, "worker.mjs");
  writeFileSync(bundle, built.replaceAll('"cloudflare:workers"', JSON.stringify(stub)));
  const probe = `const start = performance.now();
await import(${JSON.stringify(`file://${bundle}`)});
console.log(performance.now() - start);`;
  const times = [];
  for (let run = 0; run < runs; run++) {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(result.stderr);
    times.push(Number(result.stdout.trim()));
  }
  times.sort((a, b) => a - b);
  const size = Buffer.byteLength(built);
  const gzip = gzipSync(built).length;
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  console.log(
    `bundle ${(size / 1024).toFixed(1)} KiB (gzip ${(gzip / 1024).toFixed(1)} KiB); ` +
      `startup over ${runs} fresh processes: median ${at(0.5)} ms, min ${at(0)} ms, max ${at(1)} ms`,
  );
} finally {
  rmSync(out, { recursive: true, force: true });
}

// `npm run bench:captions`: how long the caption parsers take on the files of
// test/support/hostile-captions.ts (each close to the 2 MiB limit, made to be slow to read), as
// the Worker runs them (the parsers bundled by esbuild). The promise (docs/captions-and-embed.md): a 2 MiB
// file of any kind is answered within 2 s. Figures, not pass/fail.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { hostileCaptions } from "../test/support/hostile-captions.ts";

type Parsers = {
  parseWebVtt: (text: string) => { ok: boolean };
  parseSubRip: (text: string) => { ok: boolean };
};

const ROOT = path.resolve(import.meta.dirname, "..");
const RUNS = Number(process.env.BENCH_CAPTION_RUNS ?? 3);

async function loadParsers(): Promise<Parsers> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-captions-"));
  try {
    const outfile = path.join(dir, "parsers.mjs");
    await build({
      stdin: {
        contents:
          'export { parseWebVtt } from "./src/captions/webvtt"; export { parseSubRip } from "./src/captions/subrip";',
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "neutral",
      outfile,
      logLevel: "error",
    });
    return (await import(pathToFileURL(outfile).href)) as Parsers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const parsers = await loadParsers();
console.log(`caption parsing, ${RUNS} runs each (slowest shown), Node ${process.version}`);
let slowest = 0;
for (const file of hostileCaptions()) {
  const parse = file.type === "text/vtt" ? parsers.parseWebVtt : parsers.parseSubRip;
  let worst = 0;
  let ok = false;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    ok = parse(file.body).ok;
    worst = Math.max(worst, performance.now() - start);
  }
  slowest = Math.max(slowest, worst);
  const kind = file.type === "text/vtt" ? "WebVTT" : "SubRip";
  console.log(
    `${`${kind}: ${file.name}`.padEnd(48)} ${(file.body.length / 1048576).toFixed(2)} MiB  ${worst.toFixed(1).padStart(7)} ms  ${ok ? "parsed" : "refused"}`,
  );
}
console.log(`slowest: ${slowest.toFixed(1)} ms (docs/captions-and-embed.md: a 2 MiB file answered within 2,000 ms)`);

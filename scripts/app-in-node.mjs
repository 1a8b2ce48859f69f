// The Worker's app (src/app.ts) in Node, for the scripts that read what it serves without serving
// it: the OpenAPI document (openapi.mjs) and its routes (check-architecture.mjs's docs check).
// Bundled with esbuild, as wrangler bundles the Worker; nothing of it runs but the app's building.
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");

/** `createApp` and `openApiDocument`, from the app's own source. */
export async function loadApp() {
  const bundled = await build({
    stdin: {
      contents: 'export { createApp } from "./src/app"; export { openApiDocument } from "./src/http/document";',
      resolveDir: root,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    plugins: [
      {
        // The Workers runtime's own module (imported by the Container class's library and the
        // Durable Objects) is stood in for by empty classes: building the app runs none of them.
        name: "no-workers-runtime",
        setup(build) {
          build.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "workers-runtime" }));
          build.onLoad({ filter: /.*/, namespace: "workers-runtime" }, () => ({
            contents: "export class DurableObject {} export class WorkerEntrypoint {} export const env = {};",
            loader: "js",
          }));
        },
      },
      {
        // The image decoders' WebAssembly modules (src/images/decode.ts), which the Workers runtime
        // compiles from the bundle: building the app decodes no image.
        name: "no-wasm",
        setup(build) {
          build.onResolve({ filter: /\.wasm$/ }, (args) => ({ path: args.path, namespace: "wasm-stand-in" }));
          build.onLoad({ filter: /.*/, namespace: "wasm-stand-in" }, () => ({
            contents: "export default {};",
            loader: "js",
          }));
        },
      },
    ],
    write: false,
    logLevel: "error",
  });
  return import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString("base64")}`);
}

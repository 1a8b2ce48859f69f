import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { type AddressInfo, connect, createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { patternedBytes } from "../fixtures/bytes.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Bytes that differ everywhere, so a lost or repeated byte changes the hash. */
export function bytesOf(length: number, seed = 7): Buffer {
  return Buffer.from(patternedBytes(length, seed).buffer);
}

/**
 * What the dev server's R2 holds as a video's source, read from its local state with wrangler's own
 * `r2 object get --local`: the bytes as stored, with no route of the API in between.
 */
export async function storedSource(persistTo: string, projectId: string, videoId: string): Promise<Buffer> {
  const file = path.join(persistTo, `source-${videoId}.bin`);
  await run(
    process.execPath,
    [
      path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "r2",
      "object",
      "get",
      `video-hosting-media/videos/${projectId}/${videoId}/source`,
      "--local",
      "--persist-to",
      persistTo,
      "--file",
      file,
    ],
    { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const bytes = await readFile(file);
  await rm(file, { force: true });
  return bytes;
}

/**
 * A TCP proxy in front of the dev server that can drop a connection in the middle of a PATCH's
 * body, as a failing network does: `cutNextPatch(n)` lets the next PATCH through for `n` bytes
 * (its head included), then destroys both sides.
 */
export async function startCuttingProxy(target: string) {
  const { port: targetPort, hostname } = new URL(target);
  let cutAfter: number | null = null;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(targetPort), hostname);
    let passed: number | null = null;
    client.on("data", (chunk: Buffer) => {
      if (passed === null && cutAfter !== null && chunk.subarray(0, 6).toString("latin1") === "PATCH ") {
        passed = 0;
      }
      if (passed !== null && cutAfter !== null) {
        const room = cutAfter - passed;
        if (chunk.length >= room) {
          upstream.write(chunk.subarray(0, room), () => {
            cutAfter = null;
            cuts += 1;
            client.destroy();
            upstream.destroy();
          });
          passed = null;
          return;
        }
        passed += chunk.length;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => client.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    cutNextPatch(bytes: number) {
      cutAfter = bytes;
    },
    cuts: () => cuts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The bytes as a fetch body (a copy: Node's Buffer type is no BodyInit). */
export function bodyOf(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

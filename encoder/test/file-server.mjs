// @ts-check
// A local HTTP server of one file, by byte ranges, as the Worker serves a source: for the
// benchmarks' direct ffmpeg run and tests that read a large source without loading it whole.

import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";

/**
 * Serves `file` at `url` (any path), whole or by one `Range`.
 * @param {string} file
 */
export async function serveFile(file) {
  const server = createServer((req, res) => {
    const size = statSync(file).size;
    const match = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
    if (!match) {
      res.writeHead(200, { "content-length": size, "accept-ranges": "bytes" });
      createReadStream(file).pipe(res);
      return;
    }
    const start = Number(match[1]);
    const end = match[2] ? Math.min(size - 1, Number(match[2])) : size - 1;
    if (start >= size) {
      res.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, {
      "content-length": end - start + 1,
      "content-range": `bytes ${start}-${end}/${size}`,
      "accept-ranges": "bytes",
    });
    createReadStream(file, { start, end }).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("no address");
  return {
    /** The file as a source input (the token is sent and ignored). */
    source: { url: `http://127.0.0.1:${address.port}/source`, token: "local-file-server-token" },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

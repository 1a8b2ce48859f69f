import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A delivery as it arrived, and when (ms since the epoch). */
export type Received = { headers: IncomingHttpHeaders; body: string; at: number };

/**
 * A webhook receiver on 127.0.0.1: keeps every delivery (duplicates included) and answers each
 * with the next status of `answers`, then `status`.
 */
export async function startReceiver(status = 204) {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, body, at: Date.now() });
      response.writeHead(answers.shift() ?? status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    answers,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** An endpoint on 127.0.0.1 that takes each request and never answers. */
export async function startHangingServer() {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

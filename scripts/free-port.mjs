// @ts-check
import { createServer } from "node:net";

/**
 * A port nobody listens on at this moment, on 127.0.0.1 (the system picks it): for the dev
 * server's encoder, and for the servers the tests and benches start.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

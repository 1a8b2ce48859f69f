import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Debian's headless Chromium, driven by playwright-core (never a downloaded browser build). CI
 * installs it and sets REQUIRE_CHROMIUM=1, which makes the browser tests mandatory; elsewhere they
 * are skipped with a note when no Chromium is found.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);

/** Says why a browser test is skipped, or fails when Chromium is required. */
export function requireChromium(what: string): boolean {
  if (chromiumAvailable) return true;
  const how = "install it (apt-get install -y chromium) or set CHROMIUM_PATH";
  if (process.env.REQUIRE_CHROMIUM === "1")
    throw new Error(`REQUIRE_CHROMIUM=1 but no Chromium at ${CHROMIUM}: ${how}`);
  console.warn(`Skipping ${what}: no Chromium at ${CHROMIUM}; ${how} to run it.`);
  return false;
}

export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--autoplay-policy=no-user-gesture-required",
    ],
  });
}

/**
 * A customer's site on another origin than the API's (`localhost`, while the API is on 127.0.0.1):
 * it serves `files` by path, and `page` (HTML) at every other path.
 */
export async function startSite(page: string, files: Record<string, [type: string, body: Uint8Array]> = {}) {
  const server = createServer((request, response) => {
    const [type, body] = files[request.url ?? ""] ?? ["text/html; charset=utf-8", page];
    response.writeHead(200, { "content-type": type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

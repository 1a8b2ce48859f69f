import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../../src/app";
import { checkBody, ORIGIN } from "../helpers";

const app = createApp();

/** Calls the real app with some bindings replaced (an instrumented D1, say). */
export async function apiWith(bindings: Partial<Env>, path: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  await checkBody((init.method ?? "GET").toUpperCase(), path, response);
  return response;
}

import { getContainer } from "@cloudflare/containers";
import { type Job, parseJob } from "../../../media-plan/protocol.mjs";
import type { Config } from "../../config";
import { logError } from "../../lib/log";

/**
 * Where jobs run: the encoder program (media-plan/PROTOCOL.md, version 2), one job per slot. A slot is
 * a place the pool hands out (pool.ts): in production a Container instance of its own, named by
 * the slot; locally every slot is a place in the one encoder process `npm run dev` runs.
 */
export type Encoder = {
  /**
   * Starts the job on `slot`: `accepted`; `busy` when the encoder there has no room now; `refused`
   * when it answered anything else. Throws when no answer came (the job may be running).
   */
  start(slot: string, job: Job): Promise<"accepted" | "busy" | "refused">;
  /** Stops the job if it runs; nothing to stop is not an error. */
  cancel(slot: string, jobId: string): Promise<void>;
  /** Whether the encoder on `slot` runs the job (`unknown` when it answered that it does not). */
  status(slot: string, jobId: string): Promise<"running" | "unknown">;
  /** Keeps the slot's encoder from being put to sleep while its job reports progress. */
  keepAlive(slot: string): Promise<void>;
};

/**
 * How long the encoder has to answer (a Container may need to boot first): well within the
 * silence after which a job is taken over.
 */
const ANSWER_TIMEOUT_MS = 30_000;

type Send = (slot: string, path: string, init: RequestInit) => Promise<Response>;

/**
 * The protocol's Worker side over any transport: `send` delivers one request to the encoder of a
 * slot. Every job is checked with the encoder's own parser before it leaves (one schema, both
 * sides).
 */
function protocolEncoder(send: Send, keepAlive: (slot: string) => Promise<void>): Encoder {
  return {
    async start(slot, job) {
      const response = await send(slot, "/v2/jobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(parseJob(job)),
      });
      const text = await response.text();
      if (response.status === 202) return "accepted";
      if (response.status === 503) return "busy";
      logError("encoder refused the job", `${response.status} ${text.slice(0, 300)}`, { jobId: job.jobId });
      return "refused";
    },
    async cancel(slot, jobId) {
      const response = await send(slot, `/v2/jobs/${jobId}`, { method: "DELETE" });
      await response.body?.cancel();
      if (response.status !== 204 && response.status !== 404) throw new Error(`encoder cancel: ${response.status}`);
    },
    async status(slot, jobId) {
      const response = await send(slot, `/v2/jobs/${jobId}`, { method: "GET" });
      await response.body?.cancel();
      if (response.status === 200) return "running";
      if (response.status === 404) return "unknown";
      throw new Error(`encoder status: ${response.status}`);
    },
    keepAlive,
  };
}

/** The encoder program at a URL: `npm run dev` starts one beside the Worker (ENCODER_URL). */
export function urlEncoder(url: string, token: string, fetcher: typeof fetch = fetch): Encoder {
  return protocolEncoder(
    (_slot, path, init) =>
      fetcher(`${url}${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
      }),
    async () => {},
  );
}

/** The Cloudflare Container binding (production): one instance per slot, named by it. */
export function containerEncoder(namespace: Env["ENCODER"], token: string): Encoder {
  return protocolEncoder(
    (slot, path, init) =>
      getContainer(namespace, slot).fetch(
        new Request(`http://encoder${path}`, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        }),
      ),
    (slot) => getContainer(namespace, slot).renewActivityTimeout(),
  );
}

/** The encoder this environment uses: ENCODER_URL when set, else the Container binding. */
export function encoderOf(env: Env, config: Config): Encoder {
  return config.encoderUrl
    ? urlEncoder(config.encoderUrl, config.encoderToken)
    : containerEncoder(env.ENCODER, config.encoderToken);
}

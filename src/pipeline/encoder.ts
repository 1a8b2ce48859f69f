import { getContainer } from "@cloudflare/containers";
import type { Config } from "../config";
import type { Position, Resolution } from "../encoding/settings";
import { logError } from "../lib/log";

/**
 * The encoder program's side of a job (encoder/PROTOCOL.md, version 1), as the Worker sends it.
 * The settings are the ones kept on the video when its first attempt started.
 */
export type Job = {
  version: 1;
  jobId: string;
  attempt: number;
  callback: { baseUrl: string; token: string };
  settings: {
    enabledResolutions: Resolution[];
    mp4: boolean;
    watermark: { position: Position; opacity: number } | null;
  };
};

/** Where jobs run: the encoder program, reached over HTTP, one job per encoder at a time. */
export type Encoder = {
  /**
   * Starts the job: `accepted`; `busy` when the encoder runs another job now (ask again later);
   * `refused` when it answered anything else. Throws when no answer came (the job may be running).
   */
  start(job: Job): Promise<"accepted" | "busy" | "refused">;
  /** Stops the job if it runs; nothing to stop is not an error. */
  cancel(jobId: string): Promise<void>;
  /** Keeps the job's encoder from being put to sleep while it reports progress. */
  keepAlive(jobId: string): Promise<void>;
};

/**
 * How long the encoder has to answer a start or a cancel (a Container may need to boot first):
 * well within the silence after which an attempt is taken over (SILENCE_MS, 60 s).
 */
const ANSWER_TIMEOUT_MS = 30_000;

type Send = (jobId: string, path: string, init: RequestInit) => Promise<Response>;

/**
 * The protocol's Worker side over any transport: `send` delivers one request to the encoder that
 * runs (or will run) `jobId`.
 */
function protocolEncoder(send: Send, keepAlive: (jobId: string) => Promise<void>): Encoder {
  const cancel = async (jobId: string) => {
    const response = await send(jobId, `/v1/jobs/${jobId}`, { method: "DELETE" });
    await response.body?.cancel();
    if (response.status !== 204 && response.status !== 404) throw new Error(`encoder cancel: ${response.status}`);
  };
  const post = (job: Job) =>
    send(job.jobId, "/v1/jobs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job),
    });
  return {
    async start(job) {
      let response = await post(job);
      if (response.status === 409) {
        // An earlier attempt of this video still runs there (it was taken over): stop it, then start.
        await response.body?.cancel();
        await cancel(job.jobId);
        response = await post(job);
      }
      const text = await response.text();
      if (response.status === 202) return "accepted";
      if (response.status === 503) return "busy";
      logError("encoder refused the job", `${response.status} ${text.slice(0, 300)}`, { videoId: job.jobId });
      return "refused";
    },
    cancel,
    keepAlive,
  };
}

/** The encoder program at a URL: `npm run dev` starts one beside the Worker (ENCODER_URL). */
export function urlEncoder(url: string, token: string | null, fetcher: typeof fetch = fetch): Encoder {
  return protocolEncoder(
    (_jobId, path, init) =>
      fetcher(`${url}${path}`, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
      }),
    async () => {},
  );
}

/**
 * The Cloudflare Container binding (production): one container instance per video, named by its
 * id, so every attempt of a video reaches the instance that may still run an earlier one.
 */
export function containerEncoder(namespace: Env["ENCODER"]): Encoder {
  return protocolEncoder(
    (jobId, path, init) =>
      getContainer(namespace, jobId).fetch(
        new Request(`http://encoder${path}`, { ...init, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) }),
      ),
    (jobId) => getContainer(namespace, jobId).renewActivityTimeout(),
  );
}

/** The encoder this environment uses: ENCODER_URL when set, else the Container binding. */
export function encoderOf(env: Env, config: Config): Encoder {
  return config.encoderUrl ? urlEncoder(config.encoderUrl, config.encoderToken) : containerEncoder(env.ENCODER);
}

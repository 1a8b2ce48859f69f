import { type Config, readConfig } from "../config";
import { signText, timingSafeEqual } from "../lib/crypto";
import { type Encoder, encoderOf } from "./encoder";

/** What the encoding's objects and routes use, from the Worker's bindings and configuration. */
export function encodingContext(env: Env): { config: Config; encoder: Encoder; media: R2Bucket } {
  const config = readConfig(env);
  return { config, encoder: encoderOf(env, config), media: env.MEDIA };
}

/** Where the encoder calls back about its jobs (callback-routes.ts). */
export const CALLBACK_PATH = "/internal/encoding";

/** The bearer token of one job's callbacks: only this Worker can make it, and it names the job. */
export function callbackToken(config: Pick<Config, "playbackSecret">, videoId: string, jobId: string): Promise<string> {
  return signText(config.playbackSecret, "encoder-callback", `${videoId}/${jobId}`);
}

export async function isCallbackToken(
  config: Pick<Config, "playbackSecret">,
  videoId: string,
  jobId: string,
  token: string,
): Promise<boolean> {
  return timingSafeEqual(await callbackToken(config, videoId, jobId), token);
}

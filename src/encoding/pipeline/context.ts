import { type Config, readConfig } from "../../config";
import { signText, timingSafeEqual } from "../../lib/crypto";
import { acceptedSecrets, type RotatingSecret } from "../../lib/secrets";
import { type Encoder, encoderOf } from "./encoder";

/** What the encoding's objects and routes use, from the Worker's bindings and configuration. */
export function encodingContext(env: Env): { config: Config; encoder: Encoder; media: R2Bucket } {
  const config = readConfig(env);
  return { config, encoder: encoderOf(env, config), media: env.MEDIA };
}

/** Where the encoder calls back about its jobs (callback-routes.ts). */
export const CALLBACK_PATH = "/internal/encoding";

/** What a job's callbacks name: the video (and its project), and the job. */
export type JobPath = { projectId: string; videoId: string; jobId: string };

/** Where one job's callbacks go (callback-routes.ts). */
export function callbackPath(job: JobPath): string {
  return `${CALLBACK_PATH}/${job.projectId}/${job.videoId}/${job.jobId}`;
}

/**
 * The bearer token of one job's callbacks: only this Worker can make it, and it names the job and
 * its video, so a callback proves both without asking anyone. Signed with ENCODER_CALLBACK_SECRET's
 * current value.
 */
export function callbackToken(secret: RotatingSecret, job: JobPath): Promise<string> {
  return signText(secret.current, "encoder-callback", callbackPath(job));
}

/** Where job `job`'s encoder calls back, and with which token: the origin the configuration names. */
export async function jobCallback(config: Config, job: JobPath): Promise<{ baseUrl: string; token: string }> {
  const origin = config.callbackOrigin;
  if (!origin) throw new Error("ENCODER_CALLBACK_URL or PUBLIC_BASE_URL must be set for the encoder to call back");
  return { baseUrl: `${origin}${callbackPath(job)}`, token: await callbackToken(config.callbackSecret, job) };
}

/** Whether `token` is the job's, under the secret's current value or, during a rotation, its previous one. */
export async function isCallbackToken(secret: RotatingSecret, job: JobPath, token: string): Promise<boolean> {
  let valid = false;
  for (const value of acceptedSecrets(secret)) {
    if (timingSafeEqual(await signText(value, "encoder-callback", callbackPath(job)), token)) valid = true;
  }
  return valid;
}

import { z } from "zod";
import { readConfig } from "../config";
import { logError } from "../lib/log";
import { WHISPER_LANGUAGES } from "./languages";

/**
 * Who hears the speech of generated captions (docs/generated-captions.md), by SPEECH_ENGINE: Workers
 * AI's Whisper through the Worker's `AI` binding (production), or the encoder's own engine
 * (pocketsphinx, English, for `npm run dev`: no account, no network). Either way the encoder cuts
 * the audio; the recognizer is where it is heard (`worker`: the encoder sends the audio back here).
 */
export type Hearing = {
  engine: "workers-ai" | "encoder";
  recognizer: "worker" | "encoder";
  /** The languages it hears, in its own codes (languages.ts). */
  languages: readonly string[];
};
export type Unavailable = { unavailable: string };

/** What a person does when no engine hears speech: said in the 503 and the docs. */
export const NO_ENGINE_MESSAGE =
  "No speech engine is available to generate captions. Locally, add the encoder's: " +
  "`sudo apt-get install -y pocketsphinx pocketsphinx-en-us`, then restart `npm run dev`. " +
  "In production, generated captions use Workers AI: keep the `AI` binding and SPEECH_ENGINE=workers-ai.";

const HealthSchema = z.object({
  speech: z
    .object({ engine: z.string(), languages: z.array(z.string().regex(/^[a-z]{2,3}$/)) })
    .nullable()
    .optional(),
});

/**
 * Who hears speech here, or why nobody does. The encoder is asked each time (a request for a track
 * is rare, and its engine may be installed while it runs).
 */
export async function hearing(env: Env): Promise<Hearing | Unavailable> {
  const config = readConfig(env);
  if (config.speechEngine === "workers-ai") {
    if (!env.AI) return { unavailable: NO_ENGINE_MESSAGE };
    return { engine: "workers-ai", recognizer: "worker", languages: WHISPER_LANGUAGES };
  }
  // The encoder's engine is reached where the encoder is a process at a URL (`npm run dev`); the
  // production image carries none (its speech is Workers AI's).
  if (!config.encoderUrl) return { unavailable: NO_ENGINE_MESSAGE };
  return askEncoder(config.encoderUrl, config.encoderToken);
}

/** The encoder's health check says what its engine hears (encoder/speech.mjs), or null. */
async function askEncoder(url: string, token: string): Promise<Hearing | Unavailable> {
  try {
    const response = await fetch(`${url}/healthz`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5_000),
    });
    const health = HealthSchema.parse(await response.json());
    if (!response.ok || !health.speech || health.speech.languages.length === 0)
      return { unavailable: NO_ENGINE_MESSAGE };
    return { engine: "encoder", recognizer: "encoder", languages: health.speech.languages };
  } catch (error) {
    logError("speech: ask the encoder", error, { url });
    return { unavailable: NO_ENGINE_MESSAGE };
  }
}

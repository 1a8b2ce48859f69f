import { z } from "zod";
import type { Word } from "../../media-plan/protocol.mjs";

/**
 * Workers AI's Whisper (docs/generated-captions.md): the model, and its answer read into words.
 * Cloudflare's guide to long audio sends it in chunks of about a megabyte; a speech job's audio is
 * at most 32 s of 16 kHz mono WAV (1 MiB), sent base64-encoded as the model's documented input.
 */
export const WHISPER_MODEL = "@cf/openai/whisper-large-v3-turbo";

const Seconds = z.number().finite().nonnegative();

/**
 * The documented answer (`Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output`): `text`, and `segments`,
 * each with its span and, usually, its `words` with theirs. Every field but `text` is optional
 * there, so each is read only when it is present; unknown fields are let through (a model may
 * grow).
 */
export const WhisperOutputSchema = z.object({
  text: z.string(),
  segments: z
    .array(
      z.object({
        start: Seconds.optional(),
        end: Seconds.optional(),
        text: z.string().optional(),
        words: z
          .array(z.object({ word: z.string().optional(), start: Seconds.optional(), end: Seconds.optional() }))
          .optional(),
      }),
    )
    .optional(),
});
export type WhisperOutput = z.infer<typeof WhisperOutputSchema>;

/** A word as captions show it: no surrounding white space, nothing if it is only white space. */
function clean(text: string | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}

/**
 * The words of Whisper's answer, in order, times in seconds of the audio sent. A segment without
 * word times (the model did not give them) has its span shared between its words by their length,
 * so its text is still placed within it; a segment with neither is left out (it cannot be placed).
 */
export function whisperWords(output: WhisperOutput): Word[] {
  const words: Word[] = [];
  for (const segment of output.segments ?? []) {
    const timed = (segment.words ?? []).filter(
      (word): word is { word: string; start: number; end: number } =>
        clean(word.word) !== "" && word.start !== undefined && word.end !== undefined,
    );
    if (timed.length > 0) {
      for (const word of timed)
        words.push({ text: clean(word.word), start: word.start, end: Math.max(word.start, word.end) });
      continue;
    }
    const texts = clean(segment.text).split(" ").filter(Boolean);
    if (texts.length === 0 || segment.start === undefined || segment.end === undefined) continue;
    const span = Math.max(0, segment.end - segment.start);
    const letters = texts.reduce((sum, text) => sum + text.length, 0);
    let at = segment.start;
    for (const text of texts) {
      const length = (span * text.length) / letters;
      words.push({ text, start: at, end: at + length });
      at += length;
    }
  }
  return words.sort((a, b) => a.start - b.start).map((word) => ({ ...word, text: word.text.slice(0, 100) }));
}

/** Base64 of bytes, in slices (String.fromCharCode takes a bounded number of arguments). */
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

/** What Whisper hears in `audio` (WAV) said in `language` (its code): the words, times in seconds of the audio. */
export async function hearWithWhisper(ai: Ai, audio: Uint8Array, language: string): Promise<Word[]> {
  const answer = await ai.run(WHISPER_MODEL, {
    audio: base64(audio),
    task: "transcribe",
    language,
    // Whisper writes text in long silences unless told to skip them: a cue in a silence is wrong.
    vad_filter: true,
    condition_on_previous_text: false,
  });
  return whisperWords(WhisperOutputSchema.parse(answer));
}

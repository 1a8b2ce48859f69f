import { describe, expect, it } from "vitest";
import { heardAs, WHISPER_LANGUAGES } from "../../src/speech/languages";
import { hearWithWhisper, WHISPER_MODEL, type WhisperOutput, whisperWords } from "../../src/speech/whisper";

// Workers AI's Whisper through the AI binding (docs/generated-captions.md). There is no local
// Workers AI, so its answer here is the documented one (Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output
// in worker-configuration.d.ts, which `wrangler types` writes from Cloudflare's own model types):
// the adapter must read it, and send the documented input.

/** An answer of the documented shape: text, segments with their words (times in seconds), and the VTT. */
const DOCUMENTED = {
  transcription_info: { language: "en", language_probability: 0.99, duration: 12.4, duration_after_vad: 9.1 },
  text: " Welcome to the show. Thank you for watching.",
  word_count: 8,
  segments: [
    {
      start: 0.52,
      end: 2.1,
      text: " Welcome to the show.",
      temperature: 0,
      avg_logprob: -0.2,
      compression_ratio: 0.9,
      no_speech_prob: 0.01,
      words: [
        { word: " Welcome", start: 0.52, end: 0.98 },
        { word: " to", start: 0.98, end: 1.12 },
        { word: " the", start: 1.12, end: 1.3 },
        { word: " show.", start: 1.3, end: 2.1 },
      ],
    },
    {
      start: 10.02,
      end: 11.8,
      text: " Thank you for watching.",
      words: [
        { word: " Thank", start: 10.02, end: 10.3 },
        { word: " you", start: 10.3, end: 10.5 },
        { word: " for", start: 10.5, end: 10.7 },
        { word: " watching.", start: 10.7, end: 11.8 },
      ],
    },
  ],
  vtt: "WEBVTT\n\n00:00.520 --> 00:02.100\nWelcome to the show.\n",
} satisfies Ai_Cf_Openai_Whisper_Large_V3_Turbo_Output;

describe("Workers AI's Whisper", () => {
  it("reads the documented answer into words, in order, trimmed", () => {
    expect(whisperWords(DOCUMENTED)).toEqual([
      { text: "Welcome", start: 0.52, end: 0.98 },
      { text: "to", start: 0.98, end: 1.12 },
      { text: "the", start: 1.12, end: 1.3 },
      { text: "show.", start: 1.3, end: 2.1 },
      { text: "Thank", start: 10.02, end: 10.3 },
      { text: "you", start: 10.3, end: 10.5 },
      { text: "for", start: 10.5, end: 10.7 },
      { text: "watching.", start: 10.7, end: 11.8 },
    ]);
  });

  it("places a segment's words within its span when the model gave no word times, and drops what cannot be placed", () => {
    const output: WhisperOutput = {
      text: "ab cdef",
      segments: [
        { start: 1, end: 4, text: " ab cdef " },
        { text: "no times" },
        { start: 5, end: 6, words: [{ word: " " }] },
      ],
    };
    expect(whisperWords(output)).toEqual([
      { text: "ab", start: 1, end: 2 },
      { text: "cdef", start: 2, end: 4 },
    ]);
    expect(whisperWords({ text: "" })).toEqual([]);
  });

  it("sends the documented input: the audio in base64, the language, transcription; reads its answer", async () => {
    const asked: { model: string; input: Ai_Cf_Openai_Whisper_Large_V3_Turbo_Input }[] = [];
    const ai = {
      run: async (model: string, input: Ai_Cf_Openai_Whisper_Large_V3_Turbo_Input) => {
        asked.push({ model, input });
        return DOCUMENTED;
      },
    } as unknown as Ai;
    const audio = new Uint8Array(100_000).map((_, i) => i % 251);
    const words = await hearWithWhisper(ai, audio, "en");
    expect(words).toHaveLength(8);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.model).toBe(WHISPER_MODEL);
    expect(asked[0]?.input).toMatchObject({ task: "transcribe", language: "en" });
    const sent = asked[0]?.input.audio as string;
    expect(Uint8Array.from(atob(sent), (c) => c.charCodeAt(0))).toEqual(audio);
  });

  it("refuses an answer that is not of the documented shape", async () => {
    const ai = { run: async () => ({ segments: "nope" }) } as unknown as Ai;
    await expect(hearWithWhisper(ai, new Uint8Array(10), "en")).rejects.toThrow();
  });

  it("hears a BCP 47 tag as its language, in Whisper's spelling", () => {
    expect(heardAs("en", WHISPER_LANGUAGES)).toBe("en");
    expect(heardAs("pt-BR", WHISPER_LANGUAGES)).toBe("pt");
    expect(heardAs("zh-Hant", WHISPER_LANGUAGES)).toBe("zh");
    expect(heardAs("iw", WHISPER_LANGUAGES)).toBe("he");
    expect(heardAs("jv", WHISPER_LANGUAGES)).toBe("jw");
    expect(heardAs("tlh", WHISPER_LANGUAGES)).toBeNull();
    expect(heardAs("x-private", WHISPER_LANGUAGES)).toBeNull();
    expect(heardAs("fr", ["en"])).toBeNull();
  });
});

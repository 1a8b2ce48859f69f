import type { Plan } from "../../../media-plan/plan.mjs";
import type { Word } from "../../../media-plan/protocol.mjs";
import { logError } from "../../lib/log";
import { heardWordsKey } from "../../lib/storage-keys";
import { type CaptionMessage, sendCaptionMessage } from "../../queues/captions";
import { encodingContext } from "./context";
import { speechChunks, speechUnits } from "./coordinator-rules";
import { type SpeechRequest, SpeechStore } from "./coordinator-speech-store";
import type { EncodingStore, Video } from "./coordinator-store";

/**
 * The hearing of speech for generated caption tracks (docs/generated-captions.md), for a video's
 * coordinator: a track asked for is heard chunk by chunk once the plan is made (speech units,
 * background work of the fair pool), its words kept as each chunk is heard; when every chunk is,
 * the words go to R2 and the captions are told (the caption-generations queue), which make the
 * track. A video without audio is told at once; a chunk that cannot be heard after its tries, or a
 * video that errors, fails the track. What is to be told is kept until the queue has it.
 */
export class SpeechWork {
  private readonly kept: SpeechStore;

  constructor(
    private readonly env: Env,
    private readonly store: EncodingStore,
    sql: SqlStorage,
  ) {
    this.kept = new SpeechStore(sql);
  }

  /** The track of `language` being heard, or null. */
  request(language: string): SpeechRequest | null {
    return this.kept.speechRequest(language);
  }

  /**
   * A track is asked for (again): the running jobs of an older generation of it stop, what it heard
   * goes; it is heard once there is a plan.
   */
  async ask(request: SpeechRequest, plan: Plan | null) {
    const { encoder } = encodingContext(this.env);
    const running = this.store.speechUnits(request.language).filter((unit) => unit.job && unit.slot);
    await Promise.all(
      running.map((unit) =>
        encoder
          .cancel(unit.slot as string, unit.job as string)
          .catch((error) => logError("speech: cancel an older job", error, { jobId: unit.job })),
      ),
    );
    this.drop(request.language);
    this.kept.requestSpeech({ ...request, chunks: null });
    if (plan) this.planned(plan);
  }

  /** The plan is made: every track asked for gets its units, or is told silent when there is no audio. */
  planned(plan: Plan) {
    for (const request of this.kept.speechRequests()) {
      if (request.chunks !== null) continue;
      if (!plan.audio) {
        this.tell(request, { kind: "silent" });
        this.drop(request.language);
        continue;
      }
      this.kept.setSpeechChunks(request.language, speechChunks(plan));
      for (const unit of speechUnits(plan, request.language)) this.store.addUnit(unit);
    }
  }

  /** Chunk `chunk` of `language` was heard: kept; the last one makes the track's words whole. */
  async heard(language: string, chunk: number, words: Word[]) {
    const request = this.kept.speechRequest(language);
    if (!request?.chunks) return;
    this.kept.keepWords(language, chunk, words);
    if (this.kept.heardCount(language) < request.chunks) return;
    const { projectId, videoId } = this.store.video();
    const wordsKey = heardWordsKey(projectId, videoId, request.generation);
    await this.env.MEDIA.put(wordsKey, JSON.stringify(this.kept.heardWords(language)), {
      httpMetadata: { contentType: "application/json" },
    });
    this.tell(request, { kind: "words", wordsKey });
    this.drop(language);
  }

  /** The track of `language` cannot be heard (`message`, in the API's words): it fails. */
  failed(language: string, message: string) {
    const request = this.kept.speechRequest(language);
    if (request) this.tell(request, { kind: "failed", message });
    this.drop(language);
  }

  /** Every track being heard fails (the video errored), or goes unsaid (it was deleted: its tracks go with it). */
  stop(why: { failed: string } | "deleted") {
    for (const request of this.kept.speechRequests()) {
      if (why !== "deleted") this.tell(request, { kind: "failed", message: why.failed });
      this.drop(request.language);
    }
  }

  /** The video became playable: the tracks its creation asked for are asked for now (by the captions). */
  playable(languages: string[]) {
    if (languages.length === 0) return;
    const { projectId, videoId } = this.store.video();
    this.kept.keepMessage("playable", { type: "playable", projectId, videoId, languages });
  }

  /** Sends what is kept to tell; what the queue does not take now is sent at the next tick. */
  async send() {
    for (const { id, body } of this.kept.messages()) {
      try {
        await sendCaptionMessage(this.env.CAPTIONS_QUEUE, body as CaptionMessage);
        this.kept.sent(id);
      } catch (error) {
        logError("speech: tell the captions", error, { videoId: this.store.video().videoId, id });
      }
    }
  }

  /** Whether something is still to be told. */
  pending(): boolean {
    return this.kept.messages().length > 0;
  }

  /** The track of `language` is no longer heard here: its request, its units and its words go. */
  private drop(language: string) {
    this.kept.dropSpeech(language);
    this.store.deleteSpeechUnits(language);
  }

  private tell(request: SpeechRequest, outcome: Extract<CaptionMessage, { type: "heard" }>["outcome"]) {
    const { projectId, videoId }: Video = this.store.video();
    const message: CaptionMessage = {
      type: "heard",
      projectId,
      videoId,
      language: request.language,
      generation: request.generation,
      outcome,
    };
    this.kept.keepMessage(request.generation, message);
  }
}

import { storyboard } from "../../media-plan/pictures.mjs";
import type { Plan } from "../../media-plan/plan.mjs";
import { toWebVtt } from "../captions/webvtt";

/** The storyboard's sprite, relative to its WebVTT (both under the video's playback path). */
export const STORYBOARD_SPRITE = "storyboard.jpg";

/**
 * The storyboard's WebVTT (docs/encoding.md#frames-and-the-storyboard), from the plan alone: a cue
 * per tile of the sprite the encoder made from the same plan (media-plan/pictures.mjs), its text
 * the tile as a media fragment, `storyboard.jpg#xywh=x,y,w,h`. Pure.
 */
export function storyboardVtt(plan: Plan): string {
  const board = storyboard(plan);
  return toWebVtt(
    board.cues.map((cue) => ({
      start: cue.startMs,
      end: cue.endMs,
      settings: "",
      text: `${STORYBOARD_SPRITE}#xywh=${cue.x},${cue.y},${board.tileWidth},${board.tileHeight}`,
    })),
  );
}

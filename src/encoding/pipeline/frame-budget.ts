/**
 * How many frames a video may be asked to make (docs/encoding.md#frames-and-the-storyboard): at
 * most FRAMES_PER_MINUTE frames not yet made, per rolling minute, per video (the client's own limit
 * is the rate limiter's `frames` policy). Pure: the coordinator keeps the times of the frames it
 * admitted.
 */

export const FRAMES_PER_MINUTE = 60;
export const FRAME_WINDOW_MS = 60_000;

/** Admitted: the times to keep (this ask's included); refused: seconds until one frees. */
export type FrameAdmission = { admitted: true; asks: number[] } | { admitted: false; retryAfter: number };

/** Whether one more frame may be made at `now`, given the times of the frames admitted before. */
export function admitFrame(asks: readonly number[], now: number): FrameAdmission {
  const recent = asks.filter((at) => at > now - FRAME_WINDOW_MS);
  if (recent.length < FRAMES_PER_MINUTE) return { admitted: true, asks: [...recent, now] };
  const oldest = Math.min(...recent);
  return { admitted: false, retryAfter: Math.max(1, Math.ceil((oldest + FRAME_WINDOW_MS - now) / 1000)) };
}

/**
 * The Durable Objects of encoding, by what names them: a video's coordinator (coordinator.ts) by
 * the video's id, and the one pool of encoder slots (pool.ts).
 */
export function coordinatorOf(env: Env, videoId: string) {
  return env.VIDEO_ENCODINGS.get(env.VIDEO_ENCODINGS.idFromName(videoId));
}

export function poolOf(env: Env) {
  return env.ENCODER_POOL.get(env.ENCODER_POOL.idFromName("pool"));
}

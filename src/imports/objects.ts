/** The Durable Objects of imports (object.ts), one per importing video, named by its id. */
export function importObject(env: Env, videoId: string) {
  return env.VIDEO_IMPORTS.get(env.VIDEO_IMPORTS.idFromName(videoId));
}

/** Stops a deleted video's import at once: its fetch ends, and nothing more is stored. */
export function stopImport(env: Env, videoId: string): Promise<void> {
  return importObject(env, videoId).stop();
}

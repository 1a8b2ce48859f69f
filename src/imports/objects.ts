/**
 * The Durable Objects of imports (object.ts), one per import, named by `importName`: a video's by its
 * id, an added audio track's file by its generation beside it.
 */
export function importObject(env: Env, name: string) {
  return env.VIDEO_IMPORTS.get(env.VIDEO_IMPORTS.idFromName(name));
}

/** Stops a deleted video's import at once: its fetch ends, and nothing more is stored. */
export function stopImport(env: Env, videoId: string): Promise<void> {
  return importObject(env, videoId).stop();
}

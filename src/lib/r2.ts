/** R2's most keys per list and per delete call. */
export const R2_KEYS_PER_CALL = 1000;

/**
 * Deletes up to `limit` objects under `prefix`: one list and one delete (what it lists, it deletes:
 * no cursor to keep). `more` says whether anything may remain.
 */
export async function deleteSome(
  media: R2Bucket,
  prefix: string,
  limit: number = R2_KEYS_PER_CALL,
): Promise<{ removed: number; more: boolean }> {
  const listed = await media.list({ prefix, limit });
  const keys = listed.objects.map((object) => object.key);
  if (keys.length > 0) await media.delete(keys);
  return { removed: keys.length, more: listed.truncated };
}

/** Deletes every object under `prefix`, a thousand at a time. */
export async function deleteAll(media: R2Bucket, prefix: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const step = await deleteSome(media, prefix);
    removed += step.removed;
    if (!step.more) return removed;
  }
}

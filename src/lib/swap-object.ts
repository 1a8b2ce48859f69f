/** How often a compare-and-swap is tried before giving up under contention. */
const ATTEMPTS = 5;

/**
 * Points a record at a new R2 object (or at none) and deletes the object it pointed at before.
 * `attempt` reads the record and swaps it only if unchanged, reporting what it replaced (null
 * result: another change came first, so it is read and tried again). The new object is stored
 * before and the old one deleted after the swap, so the record never points at a missing object.
 */
export async function swapObject<T>(
  media: R2Bucket,
  next: string | null,
  attempt: () => Promise<{ replaced: string | null; result: T | null }>,
): Promise<T> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const { replaced, result } = await attempt();
    if (result === null) continue;
    if (replaced && replaced !== next) await media.delete(replaced);
    return result;
  }
  throw new Error("too many concurrent changes to swap an object");
}

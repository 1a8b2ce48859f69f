/** Rows one statement deletes, and statements one run makes: a run stays short, the next goes on. */
export const DRAIN_BATCH = 500;
const MAX_BATCHES = 20;

/** Repeats a bounded delete until it deletes less than a batch, or the run's budget is spent. */
export async function drain(remove: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const deleted = await remove(DRAIN_BATCH);
    total += deleted;
    if (deleted < DRAIN_BATCH) break;
  }
  return total;
}

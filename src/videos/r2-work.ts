import { logError } from "../lib/log";

/**
 * How many videos' R2 tasks run at once in this isolate, whichever message or batch they came
 * from. A deletion message names up to 100 videos and a batch holds up to 10 messages; run all at
 * once, a batch's thousand videos (a list, a delete and an abort each) flood the runtime. Under
 * `wrangler dev` the consumer shares one event loop with the requests: the request whose queue send
 * filled the batch then waited for the whole flood to drain before its body ended (measured with
 * a throwaway Worker doing only that: 1,655 and 1,744 ms, against 5 ms for its headers; README,
 * "Performance").
 */
const IN_FLIGHT = 10;
let running = 0;
const waiting: (() => void)[] = [];

/** Waits for one of the isolate's places for an R2 task, and takes it. */
async function place(): Promise<void> {
  if (running >= IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
}

/** Gives the place back after a turn of the event loop, so anything waiting for I/O goes first. */
async function leave(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  running -= 1;
  waiting.shift()?.();
}

/**
 * Runs an R2 task for every video, at most `IN_FLIGHT` at a time across the isolate, and returns the
 * videos whose task succeeded; each failure is logged (as `what`) and left for a later try.
 */
export async function forEachVideo<Row extends { id: string }>(
  rows: Row[],
  task: (row: Row) => Promise<void>,
  what: string,
): Promise<Row[]> {
  const settled = await Promise.allSettled(
    rows.map(async (row) => {
      await place();
      try {
        await task(row);
      } finally {
        await leave();
      }
    }),
  );
  return rows.filter((row, i) => {
    const result = settled[i];
    if (result?.status === "fulfilled") return true;
    logError(what, result?.reason, { videoId: row.id });
    return false;
  });
}

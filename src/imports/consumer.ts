import { readConfig } from "../config";
import { logError } from "../lib/log";
import { consumeEach, RetryLater } from "../lib/queue";
import { publishNow } from "../subscribers";
import { ImportMessageSchema, sendImport } from "../videos/import-start";
import { failImport } from "./fail";
import { IMPORT_LIMITS, type ImportLimits } from "./limits";
import { importingVideo } from "./queries";
import { type ImportDeps, runImport } from "./run";

/** An import's dependencies from the Worker's bindings: the real fetch, unless a test gives its own. */
export function importDeps(env: Env, fetcher: typeof fetch = fetch, limits: ImportLimits = IMPORT_LIMITS): ImportDeps {
  const config = readConfig(env);
  return {
    db: env.DB,
    media: env.MEDIA,
    publish: publishNow(env),
    origin: config.publicBaseUrl ?? config.callbackOrigin,
    clock: Date.now,
    // Called as a plain function: the runtime's fetch refuses a `this` other than the global scope.
    fetch: (input, init) => fetcher(input, init),
    rules: { allowHttp: config.allowHttpWebhooks },
    limits,
    encodeQueue: env.ENCODE_QUEUE,
  };
}

/**
 * The imports queue's handler (one message a batch, wrangler.toml): one run of the video's import.
 * A run whose time slice is over sends the message again; a transient failure comes back after its
 * delay (`RetryLater`); an error (R2 or D1 down) retries it, then the dead-letter queue fails it.
 */
export function consumeImports(
  batch: MessageBatch<unknown>,
  env: Env,
  fetcher: typeof fetch = fetch,
  limits: ImportLimits = IMPORT_LIMITS,
): Promise<void> {
  const deps = importDeps(env, fetcher, limits);
  return consumeEach(
    batch,
    ImportMessageSchema,
    { malformed: "import message malformed", failed: "import: run" },
    async (message) => {
      const outcome = await runImport(deps, message.videoId);
      if (outcome.kind === "continue") await sendImport(env.IMPORT_QUEUE, message);
      if (outcome.kind === "retry") throw new RetryLater(outcome.delaySeconds);
    },
  );
}

/**
 * The dead-letter queue: a message that used up its retries fails its video `import_failed`
 * (unless a run holds it now), so no video stays `importing` for ever.
 */
export async function consumeDeadImports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const deps = importDeps(env);
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = ImportMessageSchema.safeParse(message.body);
      try {
        const row = parsed.success ? await importingVideo(deps.db, parsed.data.videoId) : null;
        if (row) await failImport(deps, row, null, "it could not be fetched after many tries");
        message.ack();
      } catch (error) {
        logError("import: dead letter", error, { messageId: message.id });
        message.retry();
      }
    }),
  );
}

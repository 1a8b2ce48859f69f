import { logError } from "../lib/log";
import { consumeEach } from "../lib/queue";
import { ImportMessageSchema, importName } from "../queues/imports";
import { failDeps } from "./deps";
import { importObject } from "./objects";
import { giveUp, targetOf } from "./targets";

/**
 * The imports queue's handler: each message starts its video's import object (object.ts), which
 * runs the import by itself, so a batch is done in milliseconds whatever the origins do and no
 * import waits behind another. A start that fails (the object unreachable) is retried by the
 * queue, then the dead-letter queue gives the import up.
 */
export function consumeImports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return consumeEach(
    batch,
    ImportMessageSchema,
    { malformed: "import message malformed", failed: "import: start" },
    (message) => importObject(env, importName(message)).start(message),
  );
}

/**
 * The dead-letter queue: a message that used up its retries fails its import `import_failed` (its
 * video, or its audio track; unless a run holds it now), so nothing stays being fetched for ever.
 */
export async function consumeDeadImports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const deps = failDeps(env);
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = ImportMessageSchema.safeParse(message.body);
      try {
        if (parsed.success) await giveUp(targetOf(deps, parsed.data));
        message.ack();
      } catch (error) {
        logError("import: dead letter", error, { messageId: message.id });
        message.retry();
      }
    }),
  );
}

import type { Db } from "./lib/db";
import { type Publisher, publishEvents } from "./outbox/publish";
import { webhookSubscriber } from "./webhooks/subscriber";

/**
 * Who takes the outbox's events: the one list of subscribers, here at the composition root, so no
 * capability that records events needs to know who reads them.
 */
export function publisherOf(env: Env, db: Db = env.DB): Publisher {
  return { db, subscribers: [webhookSubscriber({ db, queue: env.WEBHOOK_QUEUE })] };
}

/** Publishes these events of `db` now (the follow-up of the change that recorded them). */
export function publishNow(env: Env, db: Db = env.DB): (eventIds: string[]) => Promise<void> {
  return (ids) => publishEvents(publisherOf(env, db), { ids });
}

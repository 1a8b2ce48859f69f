import { type Publisher, publishEvents } from "./events/publish";
import { webhookSubscriber } from "./webhooks/subscriber";

/**
 * Who takes the outbox's events: the one list of subscribers, here at the composition root, so no
 * capability that records events needs to know who reads them.
 */
export function publisherOf(env: Env): Publisher {
  return { db: env.DB, subscribers: [webhookSubscriber({ db: env.DB, queue: env.WEBHOOK_QUEUE })] };
}

/** Publishes these events now (the follow-up of the change that recorded them). */
export function publishNow(env: Env): (eventIds: string[]) => Promise<void> {
  return (ids) => publishEvents(publisherOf(env), { ids });
}

import { DurableObject } from "cloudflare:workers";
import { readConfig } from "../config";
import { deliverOrReschedule } from "./delivery";
import { type DeliveryMessage, DeliveryMessageSchema, type Lanes } from "./delivery-queue";

/** Sends in flight at once to one endpoint; more wait their turn in the lane. */
export const IN_FLIGHT = 6;

/**
 * A lane's schedule: messages run in the order they came, at most `limit` at a time, each started
 * through `start` (the Durable Object's `waitUntil`) and never awaited by whoever handed it in. A
 * message already in hand is not taken twice.
 */
export class LaneSchedule {
  #waiting: DeliveryMessage[] = [];
  #running = new Set<string>();
  #whenIdle: (() => void)[] = [];

  constructor(
    private readonly run: (message: DeliveryMessage) => Promise<void>,
    private readonly start: (work: Promise<void>) => void,
    private readonly limit = IN_FLIGHT,
  ) {}

  accept(message: DeliveryMessage): void {
    const { deliveryId } = message;
    if (!this.#running.has(deliveryId) && !this.#waiting.some((m) => m.deliveryId === deliveryId)) {
      this.#waiting.push(message);
    }
    this.#pump();
  }

  get running(): number {
    return this.#running.size;
  }

  /** Resolves once nothing is waiting or running. */
  idle(): Promise<void> {
    if (this.#running.size === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenIdle.push(resolve));
  }

  #pump(): void {
    while (this.#running.size < this.limit) {
      const message = this.#waiting.shift();
      if (!message) break;
      this.#running.add(message.deliveryId);
      const work = this.run(message)
        .catch(() => {}) // `run` records its own failures; a lane outlives any one of them
        .finally(() => {
          this.#running.delete(message.deliveryId);
          this.#pump();
          if (this.#running.size === 0 && this.#waiting.length === 0) {
            for (const resolve of this.#whenIdle.splice(0)) resolve();
          }
        });
      this.start(work);
    }
  }
}

/**
 * One endpoint's delivery lane (a Durable Object per endpoint). The queue consumer hands it an
 * attempt and returns at once; the lane sends it in the background. An endpoint that hangs or
 * fails therefore holds only its own lane: other endpoints' lanes, and the queue's batches, never
 * wait for it (docs/webhooks.md, endpoints are isolated), and its retries are scheduled through the
 * queue with their delays, never waited for.
 *
 * Nothing is kept in the object's storage: the attempt's state lives in D1, where the consumer's
 * claim keeps two lanes (or a lane and a duplicate message) from sending it twice. If the object
 * is reset with work in hand, the attempts stay pending and the scheduled sweep sends them again.
 */
export class DeliveryLane extends DurableObject<Env> {
  #schedule = new LaneSchedule(
    (message) =>
      deliverOrReschedule(
        {
          db: this.env.DB,
          queue: this.env.WEBHOOK_QUEUE,
          fetch: (...args) => fetch(...args),
          targets: { allowHttp: readConfig(this.env).allowHttpWebhooks },
        },
        message,
      ),
    (work) => this.ctx.waitUntil(work),
  );

  /** Takes an attempt; it is sent after those before it, and this returns before it is sent. */
  accept(input: unknown): void {
    this.#schedule.accept(DeliveryMessageSchema.parse(input));
  }
}

/** The lanes as the consumer sees them: each message to its endpoint's object. */
export function lanesOf(namespace: DurableObjectNamespace<DeliveryLane>): Lanes {
  return {
    async accept(message) {
      await namespace.get(namespace.idFromName(message.endpointId)).accept(message);
    },
  };
}

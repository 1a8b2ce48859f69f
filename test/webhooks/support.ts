import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { toBase64 } from "../../src/lib/encoding";
import { deliverOrReschedule } from "../../src/webhooks/delivery";
import type { DeliveryMessage } from "../../src/webhooks/delivery-queue";
import { api, bearer, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { runQueue } from "../support/handlers";

export type Endpoint = {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  description: string | null;
  createdAt: string;
  secret?: string;
};
export type Attempt = {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  state: string;
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  durationMs: number | null;
  createdAt: string;
  completedAt: string | null;
  nextRetryAt: string | null;
};

export async function setUp() {
  const workspace = await newWorkspace();
  const base = `/v1/projects/${workspace.project.id}/webhook-endpoints`;
  const created = await api(
    base,
    bearer(workspace.key, json("POST", { url: "https://hooks.example.com/in", description: "main" })),
  );
  expect(created.status).toBe(201);
  return { ...workspace, base, endpoint: (await created.json()) as Endpoint };
}

/** Deletes a video and waits for the request's follow-up (publishing its event). */
export async function deleteAVideo(key: string): Promise<string> {
  const { video } = await newVideo(key);
  const response = await apiWith({}, `/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
  expect(response.status).toBe(204);
  return video.id;
}

export async function attemptsOf(endpointId: string) {
  const { results } = await env.DB.prepare("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY attempt")
    .bind(endpointId)
    .all<{ id: string; state: string; attempt: number; next_retry_at: string | null; event_id: string }>();
  return results;
}

/**
 * Lanes that deliver in this isolate, awaited, with the code a lane runs: a test's fetch mock
 * answers, and the queue handler returns when the delivery is done. The Durable Object's own
 * scheduling is tested in lane.test.ts, and the whole path against wrangler dev in test/e2e.
 */
export function inlineLanes(): Env["DELIVERY_LANES"] {
  const deps = {
    db: env.DB,
    queue: env.WEBHOOK_QUEUE,
    fetch: (...args: Parameters<typeof fetch>) => fetch(...args),
    targets: { allowHttp: false },
  };
  return {
    idFromName: (name: string) => name,
    get: () => ({ accept: (message: DeliveryMessage) => deliverOrReschedule(deps, message) }),
  } as unknown as Env["DELIVERY_LANES"];
}

/** Runs the delivery queue's handler over messages. A body naming only `deliveryId` gets its
 * attempt's endpoint and project filled in. */
export async function consume(bodies: unknown[]) {
  return runQueue("webhook-deliveries", await Promise.all(bodies.map(fillMessage)), { DELIVERY_LANES: inlineLanes() });
}

async function fillMessage(body: unknown): Promise<unknown> {
  if (typeof body !== "object" || body === null || !("deliveryId" in body) || "endpointId" in body) return body;
  const row = await env.DB.prepare(
    `SELECT d.endpoint_id AS endpointId, e.project_id AS projectId
     FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = ?`,
  )
    .bind(body.deliveryId)
    .first<{ endpointId: string; projectId: string }>();
  return row ? { ...body, ...row } : body;
}

export async function expectedSignature(secret: string, id: string, timestamp: string, body: string): Promise<string> {
  const keyBytes = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/** Runs the dead-letter queue's handler over messages (ids d0, d1, …). */
export function consumeDeadLetters(bodies: unknown[]) {
  return runQueue("webhook-deliveries-dlq", bodies, {}, "d");
}

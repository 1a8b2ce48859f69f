import { EVENT_TYPES, type EventType } from "./events";

export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Waits before attempts 2 to 8, in seconds; then given up. The reference states them from here (docs.ts). */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
/** A 2xx within this is success. */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** Why an attempt failed: a category, never an exception's text (that goes to the log). */
export const DELIVERY_ERRORS = [
  "http_status",
  "timeout",
  "connection_failed",
  "invalid_target",
  "endpoint_disabled",
  "account_suspended",
  "gave_up",
] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

export const DISABLED_REASONS = ["gone", "manual"] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** How long the old secret keeps signing after a rotation, beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

export type EndpointRow = {
  id: string;
  project_id: string;
  /** 1 live, 0 test (docs/api-guide.md#test-mode-and-going-live): it receives only the events of its mode's videos. */
  livemode: number;
  url: string;
  event_types: string;
  enabled: number;
  disabled_reason: DisabledReason | null;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_at: string;
};

export type DeliveryRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  state: DeliveryState;
  attempt: number;
  response_status: number | null;
  error: DeliveryError | null;
  duration_ms: number | null;
  created_at: string;
  completed_at: string | null;
  next_retry_at: string | null;
};

export function toEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    livemode: row.livemode === 1,
    url: row.url,
    eventTypes: subscribedTypes(row),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    description: row.description,
    createdAt: row.created_at,
  };
}

export function toDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    state: row.state,
    attempt: row.attempt,
    responseStatus: row.response_status,
    error: row.error,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
    completedAt: row.completed_at,
    nextRetryAt: row.next_retry_at,
  };
}

/**
 * What a deliveries cursor is signed over besides its position: the endpoint and the filter, so it
 * is refused on any other listing.
 */
export function deliveriesCursorScope(
  endpointId: string,
  filter: { state?: string | undefined; eventType?: string | undefined },
): string {
  return JSON.stringify(["deliveries", endpointId, filter.state ?? null, filter.eventType ?? null]);
}

/** `event_types` of an endpoint created without `eventTypes`: every type, including types added later. */
export const EVERY_TYPE = JSON.stringify("*");

/** The event types an endpoint receives. */
export function subscribedTypes(row: Pick<EndpointRow, "event_types">): EventType[] {
  const stored = JSON.parse(row.event_types) as EventType[] | "*";
  return stored === "*" ? [...EVENT_TYPES] : stored;
}

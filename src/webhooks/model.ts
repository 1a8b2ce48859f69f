export const EVENT_TYPES = ["video.deleted"] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Waits before attempts 2 to 8, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then given up. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
/** A 2xx within this is success. */
export const DELIVERY_TIMEOUT_MS = 15_000;

export type EndpointRow = {
  id: string;
  project_id: string;
  url: string;
  event_types: string;
  enabled: number;
  description: string | null;
  secret: string;
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
  error: string | null;
  duration_ms: number | null;
  created_at: string;
  completed_at: string | null;
  next_retry_at: string | null;
};

export function toEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    eventTypes: JSON.parse(row.event_types) as EventType[],
    enabled: row.enabled === 1,
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

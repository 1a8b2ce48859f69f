import { CAPTION_EVENTS } from "../captions/events";
import { VIDEO_EVENTS } from "../videos/events";

/**
 * Every event type the service sends, with its schema and how the API reference names it: the
 * types an endpoint subscribes to (an endpoint created without `eventTypes` receives every one,
 * those added later included), and the reference's `webhooks` entries. Each capability defines its
 * own events (videos/events.ts, captions/events.ts); this is where they meet.
 */
export const EVENTS = { ...VIDEO_EVENTS, ...CAPTION_EVENTS };

export type EventType = keyof typeof EVENTS;
export const EVENT_TYPES = Object.keys(EVENTS) as [EventType, ...EventType[]];

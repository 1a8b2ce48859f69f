import type { paths } from "../api-client/api.d.ts";
import type { ApiKey, Delivery, EncodingSettings, Schemas, Video, WebhookEndpoint } from "./api";

/**
 * The API's enumerations, as the generated types name them, and the lists the views offer of them.
 *
 * A list is written as a record of every value of the generated union (`listOf`): a value the API
 * adds is missing from the record, and one it removes is a key the union does not have; either way
 * `npm run typecheck` fails here, after `npm run openapi`, instead of a person's request at run time.
 * The record's order is the order the views show.
 */
export function listOf<Value extends string>(values: Record<Value, true>): readonly Value[] {
  return Object.keys(values) as Value[];
}

export type Mode = ApiKey["mode"];
export type KeyScope = ApiKey["scopes"][number];
export type VideoStatus = Video["status"];
export type Visibility = Video["visibility"];
export type Resolution = EncodingSettings["enabledResolutions"][number];
export type Position = EncodingSettings["watermark"]["position"];
export type EventType = WebhookEndpoint["eventTypes"][number];
export type DeliveryState = Delivery["state"];
/** The plans an operator sets (an account's own plan may also be `trial`, which no one sets). */
export type Plan = Schemas["OperatorPlan"]["plan"];

export const MODES = listOf<Mode>({ live: true, test: true });
export const KEY_SCOPES = listOf<KeyScope>({ read: true, write: true });
export const STATUSES = listOf<VideoStatus>({
  waiting_for_upload: true,
  importing: true,
  upload_completing: true,
  uploaded: true,
  processing: true,
  ready: true,
  errored: true,
});
export const VISIBILITIES = listOf<Visibility>({ public: true, unlisted: true, private: true });
/** Lowest first. */
export const RESOLUTIONS = listOf<Resolution>({
  "240p": true,
  "360p": true,
  "480p": true,
  "720p": true,
  "1080p": true,
  "1440p": true,
  "2160p": true,
});
export const POSITIONS = listOf<Position>({
  "top-left": true,
  "top-right": true,
  "bottom-left": true,
  "bottom-right": true,
  center: true,
});
export const EVENT_TYPES = listOf<EventType>({
  "video.playable": true,
  "video.ready": true,
  "video.errored": true,
  "video.deleted": true,
  "video.captions.ready": true,
  "video.captions.errored": true,
});
export const DELIVERY_STATES = listOf<DeliveryState>({ pending: true, succeeded: true, failed: true });
export const PLANS = listOf<Plan>({ free: true, pro: true, business: true });

/** The media types a route takes a raw body in: its request body's content types. */
type BodyType<Path extends keyof paths> = keyof NonNullable<paths[Path]["put"]>["requestBody"]["content"];

/** What a custom thumbnail may be, in the order a file chooser lists them. */
export const THUMBNAIL_TYPES = listOf<BodyType<"/v1/videos/{id}/thumbnail">>({
  "image/jpeg": true,
  "image/png": true,
  "image/webp": true,
});
export const WATERMARK_TYPES = listOf<BodyType<"/v1/projects/{projectId}/encoding-settings/watermark-image">>({
  "image/png": true,
  "image/webp": true,
});
export type CaptionsType = BodyType<"/v1/videos/{id}/captions/{language}">;
/** Each captions format's file extension. */
export const CAPTIONS_EXTENSIONS: Record<CaptionsType, string> = { "text/vtt": ".vtt", "application/x-subrip": ".srt" };

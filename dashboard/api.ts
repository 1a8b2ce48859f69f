import createClient from "openapi-fetch";
import type { components, paths } from "../api-client/api.d.ts";

/**
 * The dashboard's only way to the service: the public `/v1` API, typed by the paths `npm run
 * openapi` generates from the OpenAPI document (one source with the end-to-end tests' client), with
 * the session cookie. Same-origin writes carry the page's `Origin`, which the API accepts (section 3).
 */
export const api = createClient<paths>({ baseUrl: globalThis.location?.origin ?? "", credentials: "same-origin" });

export type Schemas = components["schemas"];
export type Account = Schemas["Account"];
export type Project = Schemas["Project"];
export type Video = Schemas["Video"];
export type ApiKey = Schemas["ApiKey"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type Delivery = Schemas["WebhookDeliveryAttempt"];
export type EncodingSettings = Schemas["EncodingSettings"];
export type CaptionTrack = Schemas["CaptionTrack"];
export type Chapter = Schemas["Chapter"];
export type VideoStatus = Video["status"];
export type Visibility = Video["visibility"];

/** One `details` entry of an error body: the field (`path`) and what is wrong with it. */
export type FieldProblem = { path: string; message: string };

/** A request the API refused, in the API's own words. */
export class ApiFailure extends Error {
  override name = "ApiFailure";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
  }
}

type ErrorBody = { error?: { code?: unknown; message?: unknown; details?: unknown } };

/** The failure an error response describes; a body that is not the API's shape still reads as words. */
export function failureOf(status: number, body: unknown): ApiFailure {
  const error = (body as ErrorBody | undefined)?.error;
  const code = typeof error?.code === "string" ? error.code : `http_${status}`;
  const message =
    typeof error?.message === "string" ? error.message : `The request failed (HTTP ${status}). Try again.`;
  const details = Array.isArray(error?.details)
    ? error.details.filter(
        (detail): detail is FieldProblem =>
          typeof detail?.path === "string" && typeof (detail as FieldProblem).message === "string",
      )
    : [];
  return new ApiFailure(status, code, message, details);
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The answer's data, or the API's failure thrown; a network failure reads as words too. */
export async function must<T>(request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch {
    throw new ApiFailure(0, "network_error", "The service could not be reached. Check the connection and try again.");
  }
  if (!answer.response.ok) throw failureOf(answer.response.status, answer.error);
  return answer.data as T;
}

/** A plain JSON GET for routes the generated types may not have yet (analytics, section 20). */
export async function getJson(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(path, { credentials: "same-origin", headers: { accept: "application/json" } });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : undefined;
  if (!response.ok && response.status !== 404) throw failureOf(response.status, body);
  return { status: response.status, body };
}

/** Raw bytes to a `/v1` path (a thumbnail, captions, a watermark image), with the file's media type. */
export async function sendFile<T>(method: "PUT", path: string, file: Blob, contentType: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      body: file,
      credentials: "same-origin",
      headers: { "content-type": contentType },
    });
  } catch {
    throw new ApiFailure(0, "network_error", "The service could not be reached. Check the connection and try again.");
  }
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : undefined;
  if (!response.ok) throw failureOf(response.status, body);
  return body as T;
}

/** A path with a query string (for sendFile). */
export function withQuery(path: string, query: Record<string, string>): string {
  return `${path}?${new URLSearchParams(query)}`;
}

import createClient from "openapi-fetch";
import type { components, paths } from "../api-client/api.d.ts";

/**
 * The dashboard's only way to the service: the public `/v1` API through openapi-fetch, typed by the
 * paths `npm run openapi` generates from the OpenAPI document into api-client/ (docs/dashboard.md),
 * with the session cookie. Every request names its route as the document does
 * (`api.GET("/v1/videos/{id}", …)`), so its parameters, body and answer are the document's types.
 * Same-origin writes carry the page's `Origin`, which the API accepts with no configuration.
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

/** One `details` entry of an error body: the field (`path`) and what is wrong with it. */
export type FieldProblem = Schemas["ErrorDetail"];

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

/**
 * What every error answer of the document has in common; each route's own (its codes as a union)
 * fits it, so an answer whose errors took another shape would fail the type check where it is read.
 */
type ErrorAnswer = { error: { code: string; message: string; details?: FieldProblem[] } };

/**
 * The failure an answer describes. openapi-fetch gives an error body that is not JSON as its text
 * (a proxy's HTML page, say): that still reads as words.
 */
export function failureOf(status: number, body: ErrorAnswer | string | undefined): ApiFailure {
  const error = typeof body === "object" && body !== null ? body.error : undefined;
  if (!error) return new ApiFailure(status, `http_${status}`, `The request failed (HTTP ${status}). Try again.`);
  return new ApiFailure(status, error.code, error.message, error.details ?? []);
}

/** An answer of the typed client, as `must` reads it. */
type Answer<T> = { data?: T; error?: ErrorAnswer | string; response: Response };

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

/**
 * The options that send a file as the request's body, as it is (a thumbnail, captions, a watermark
 * image), with its media type: the generated types give such a body as a Blob, and openapi-fetch
 * would send it as JSON unless its serializer hands it on untouched.
 */
export function fileBody(file: Blob, type: string) {
  return { body: file, bodySerializer: (body: Blob) => body, headers: { "content-type": type } };
}

import { z } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ULID_PATTERN, ULID_PATTERN_ANY_CASE } from "../lib/ulid";
import { ERRORS, type ErrorCode, errorHeaders } from "./errors";

const ULID_EXAMPLE = "01JD5Q3V7Y8N2M4K6P9R0S1T2V";
export const UlidSchema = z
  .string()
  .openapi({ example: ULID_EXAMPLE, description: "ULID", pattern: ULID_PATTERN.source });

/**
 * A ULID in a path, compared case-insensitively. Documented with its pattern but not enforced
 * here: any other text names nothing, and the route answers its own not-found code for it.
 */
export function pathId(what: string) {
  return z.string().openapi({
    description: `The ${what}'s ULID (case-insensitive)`,
    example: ULID_EXAMPLE,
    pattern: ULID_PATTERN_ANY_CASE.source,
  });
}
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** `text` with each control character made a space: for text the service writes itself, of words it did not choose. */
export function withoutControlCharacters(text: string): string {
  return text.replace(new RegExp(CONTROL_CHARACTERS.source, "g"), " ");
}

/** Well-formed Unicode without control characters (docs/api-rules.md#text-fields): what every text field must be. */
export function isCleanText(text: string): boolean {
  return !CONTROL_CHARACTERS.test(text) && !LONE_SURROGATE.test(text);
}

/**
 * A text field: refused (with the route's validation code) rather than stored altered when it
 * holds a lone surrogate, which D1 would turn into U+FFFD, or a control character.
 */
export function textSchema() {
  return z.string().refine(isCleanText, "must be well-formed Unicode without control characters");
}

export const TimestampSchema = z
  .string()
  .openapi({ example: "2026-11-22T06:00:00.000Z", description: "ISO 8601 UTC with milliseconds", format: "date-time" });

/**
 * Whether an object is live or test (docs/api-guide.md#test-mode-and-going-live), as every object
 * that has a mode shows it: videos, direct uploads and webhook endpoints; `more` says what the mode
 * means for this one.
 */
export function livemodeSchema(more = "") {
  return z.boolean().openapi({
    description:
      "true for a live object, false for a test one: the mode of the API key that created it (`svc_live_…` or " +
      "`svc_test_…`; a session cookie creates live objects, and test ones with `?mode=test`). A key sees only " +
      `its own mode's objects.${more && ` ${more}`}`,
  });
}

const ErrorDetailSchema = z
  .object({ path: z.string(), message: z.string() })
  .openapi("ErrorDetail", { description: "Which field is at fault (dotted path) and why" });

/** The error body, with `code` limited to the codes that can come with this status. */
function errorBody(codes: [ErrorCode, ...ErrorCode[]]) {
  return z.object({
    error: z.object({
      code: z.enum(codes),
      message: z.string().openapi({ description: "Human readable; may change" }),
      requestId: z.string().openapi({ description: "The response's x-request-id" }),
      details: z.array(ErrorDetailSchema).optional(),
    }),
  });
}

/**
 * Every response header the document declares, once; routes, middleware and the error table name
 * them (route() attaches them, as `#/components/headers/<name>` references).
 */
export const RESPONSE_HEADERS = {
  "x-request-id": {
    description: "This response's id (a ULID), on every response; quote it when reporting a problem",
    schema: { type: "string", pattern: ULID_PATTERN.source, example: ULID_EXAMPLE },
  },
  "Cache-Control": {
    description: "`no-store` on every /v1 response; public media keep a long immutable lifetime",
    schema: { type: "string", example: "no-store" },
  },
  "x-d1-bookmark": {
    description:
      "On every /v1 response that read or wrote data: send it back in the `x-d1-bookmark` request header to read " +
      "at least these writes, wherever the next request lands",
    schema: { type: "string", example: "00000085-00000024-00005071-8ab1f3c1e5c43b5f4bb0d8a6c2f3ebd1" },
  },
  RateLimit: {
    description: 'The caller\'s limit bucket: `"<policy>";r=<requests remaining>;t=<seconds until the window resets>`',
    schema: { type: "string", example: '"bulk";r=29;t=60' },
  },
  "RateLimit-Policy": {
    description: 'The limit: `"<policy>";q=<requests>;w=<window in seconds>`',
    schema: { type: "string", example: '"bulk";q=30;w=60' },
  },
  "Retry-After": {
    description: "Seconds to wait before retrying",
    schema: { type: "integer", minimum: 1, example: 12 },
  },
  ETag: {
    description:
      "The version of the resource: send it in `If-Match` to change only that version, or in `If-None-Match` " +
      "to be answered 304 while it is current",
    schema: { type: "string", example: '"7"' },
  },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`",
    schema: { type: "string", enum: ["true"] },
  },
  Location: {
    description: "The absolute URL of the resource this request created",
    schema: {
      type: "string",
      format: "uri",
      example: "https://video-api.example.com/v1/uploads/01JD5Q3V7Y8N2M4K6P9R0S1T2V",
    },
  },
  "Last-Modified": {
    description: "When the resource last changed (an HTTP date)",
    schema: { type: "string", example: "Sun, 22 Nov 2026 06:00:00 GMT" },
  },
} satisfies Record<string, { description: string; schema: { type: "string" | "integer" } & Record<string, unknown> }>;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** The response headers named, as references to the document's `components.headers`. */
export function headerRefs(names: Iterable<string>) {
  return Object.fromEntries(
    [...new Set(names)].map((name) => {
      if (!(name in RESPONSE_HEADERS)) throw new Error(`No response header ${name} in RESPONSE_HEADERS`);
      return [name, { $ref: `#/components/headers/${name}` }];
    }),
  );
}

/**
 * OpenAPI responses for the given error codes, grouped by status, read from the one error table,
 * each with the headers its codes come with.
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<ContentfulStatusCode, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => [
      status,
      {
        description: group.map((code) => `\`${code}\``).join(", "),
        headers: headerRefs(group.flatMap(errorHeaders)),
        content: { "application/json": { schema: errorBody(group as [ErrorCode, ...ErrorCode[]]) } },
      },
    ]),
  );
}

/** A JSON request body for createRoute, required so that an absent body fails validation. */
export function jsonRequest<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/**
 * A whole number from a path or query string, written in decimal digits only and within
 * `min`–`max`: `0x10`, `1e1`, `5.0`, ` 5` and `+5` are refused, as an "integer" of the API means
 * (docs/api-rules.md#json-bodies). The document shows it as the integer it is.
 */
export function decimalInt(min: number, max: number, description: string) {
  return z
    .preprocess(
      (value) => (typeof value === "string" && /^\d{1,9}$/.test(value) ? Number(value) : value),
      z.int().min(min).max(max),
    )
    .openapi({ type: "integer", minimum: min, maximum: max, description, example: min });
}

/** A raw-bytes response of one of `types`. */
export function binaryResponse(types: readonly string[], description: string) {
  return {
    description,
    content: Object.fromEntries(types.map((type) => [type, { schema: z.string().openapi({ format: "binary" }) }])),
  } as const;
}

/** A raw-bytes request body of one of `types`, with its limits said in `description`. */
export function binaryBody(types: readonly string[], description: string) {
  return {
    required: true,
    description,
    content: Object.fromEntries(
      // `contentMediaType` (OpenAPI 3.1's way to say "these bytes") is added with the examples, in completeDocument.
      types.map((type) => [type, { schema: z.string().openapi({ format: "binary" }) }]),
    ),
  } as const;
}

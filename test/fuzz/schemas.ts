import fc from "fast-check";
import type { Schema } from "../../src/http/openapi";

export type JsonSchema = Schema;
export type Document = { components?: { schemas?: Record<string, JsonSchema> } };

export function resolve(doc: Document, schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace("#/components/schemas/", "");
  return resolve(doc, doc.components?.schemas?.[name] ?? {});
}

/**
 * Values that fit the schema. `ids` stands in for any string described as a ULID, so bodies
 * name real videos (the caller's and other tenants') as well as unknown ones.
 */
export function schemaValue(
  doc: Document,
  raw: JsonSchema,
  ids: fc.Arbitrary<string>,
  depth = 0,
): fc.Arbitrary<unknown> {
  const schema = resolve(doc, raw);
  if (depth > 6) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return fc.oneof(...choices.map((choice) => schemaValue(doc, choice, ids, depth + 1)));
  if (schema.allOf?.[0]) return schemaValue(doc, schema.allOf[0], ids, depth + 1);
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type) => schemaValue(doc, { ...schema, type }, ids, depth)));
  }
  switch (schema.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case "string":
      if (/ULID/.test(schema.description ?? "")) return ids;
      if (schema.format === "binary") return fc.constant("");
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
    case "array":
      return fc.array(schemaValue(doc, schema.items ?? {}, ids, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, 5),
      });
    case "object": {
      const properties = schema.properties ?? {};
      const record = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, schemaValue(doc, value, ids, depth + 1)]),
      );
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Control characters, and the invisible ones that change how text reads. */
const CONTROL = fc
  .array(
    fc.constantFrom(...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)), "\u007f", "\u202e", "\u200b"),
    { minLength: 1, maxLength: 20 },
  )
  .map((chars) => chars.join(""));

/** Text JSON can carry but the API never stores: lone surrogates, C0 and C1 controls. */
export const BROKEN_TEXT = fc.constantFrom(
  "\ud800",
  "a\udfffb",
  "\udc00\ud800",
  "tab\there",
  "nul\u0000",
  "c1\u0085",
  "del\u007f",
);

/**
 * Content-Type spellings of a JSON body: those the API accepts, and those it refuses
 * (docs/api-rules.md#json-bodies).
 */
export const JSON_CONTENT_TYPES = [
  "application/json",
  "application/json;",
  "application/json ;charset=utf-8",
  "application/json;;",
  "APPLICATION/JSON; charset=UTF-8",
  'application/json; charset="utf-8"',
  "application/json; =",
  "application/vnd_x+json",
  "application/merge-patch+json",
  "application/jsonx",
  "text/json",
  ";application/json",
  "",
];

/** Headers clients send malformed: conditionals, bookmarks, credentials, origins. */
export const HEADER_VARIANTS: Record<string, string>[] = [
  { "if-match": "garbage" },
  { "if-match": '"a' },
  { "if-none-match": '"a' },
  { "if-none-match": "garbage" },
  { "if-unmodified-since": "yesterday" },
  { "if-modified-since": "yesterday" },
  { "if-match": "*", "if-none-match": "*" },
  { "x-d1-bookmark": "garbage" },
  { "x-d1-bookmark": "x".repeat(5000) },
  { authorization: "Bearer" },
  { authorization: "Basic dXNlcjpwYXNz" },
  { authorization: "Bearer svc_live_" },
  { cookie: "svc_session=%%%; svc_session=" },
  { origin: "null" },
  { range: "bytes=abc" },
  { "x-request-id": "not-an-id" },
];

/** A value broken the ways clients break them. */
export function mutate(value: unknown): fc.Arbitrary<unknown> {
  const replacement = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant("x".repeat(10_000)),
    fc.constant("y".repeat(70_000)),
    CONTROL,
    BROKEN_TEXT,
    fc.integer({ min: 1, max: 3000 }).map((depth) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`)),
    fc.constantFrom(-1, 0, 1.5, 1e308, -0, true, false, null, "", [], {}),
  );
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fc.oneof(replacement, fc.constant([value, value]));
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const options: fc.Arbitrary<unknown>[] = [
    replacement,
    fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })).map(([key, extra]) => ({
      ...record,
      [`${key}_unknown`]: extra,
    })),
  ];
  if (keys.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...keys), replacement).map(([key, bad]) => ({ ...record, [key]: bad })),
      fc.constantFrom(...keys).map((key) => {
        const { [key]: _dropped, ...rest } = record;
        return rest;
      }),
    );
  }
  return fc.oneof(...options);
}

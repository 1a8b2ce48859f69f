import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { ERRORS, type ErrorCode } from "./errors";
import { OPENAPI_DOCUMENT, type Schema } from "./openapi";

/**
 * The document as served: what @hono/zod-openapi generates from the routes' schemas, completed in
 * one pass over every operation (so a route added later gets the same):
 * - every JSON request and response body gets an `example` built from its own schema (the
 *   schema's examples, defaults, first enum values, formats and bounds), which
 *   test/http/openapi-examples.test.ts parses with the route's zod schemas;
 * - raw-bytes bodies say their media type (`contentMediaType`);
 * - an API key's scope moves from the security requirement, where OpenAPI tools expect OAuth
 *   scopes only, to `x-api-key-scope` (and the description's "Auth:" line);
 * - the introduction ends with every error code, its status and meaning, from the error table.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  const rows = (Object.entries(ERRORS) as [ErrorCode, { status: number; message: string }][]).map(
    ([code, { status, message }]) => `| \`${code}\` | ${status} | ${message.replaceAll("|", "\\|")} |`,
  );
  const description = `${OPENAPI_DOCUMENT.info.description}\n\n## Errors\n\nEvery error code, with its status:\n\n| Code | Status | Meaning |\n| --- | --- | --- |\n${rows.join("\n")}`;
  return completeDocument(
    app.getOpenAPI31Document({ ...OPENAPI_DOCUMENT, info: { ...OPENAPI_DOCUMENT.info, description } }),
  );
}

type Media = { schema?: Schema; example?: unknown };
type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
  "x-api-key-scope"?: string;
};
type Document = {
  paths?: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

export function completeDocument<D extends object>(generated: D): D {
  // A copy: the generated document shares objects with the routes' configurations (their security).
  const completed = structuredClone(generated);
  const doc = completed as Document;
  const examples = new Examples(doc.components?.schemas ?? {});
  const operations = [...Object.values(doc.paths ?? {}), ...Object.values(doc.webhooks ?? {})].flatMap((item) =>
    Object.values(item),
  );
  for (const operation of operations) {
    for (const requirement of operation.security ?? []) {
      const scopes = requirement.apiKey;
      if (scopes?.length) {
        operation["x-api-key-scope"] = scopes.join(" ");
        requirement.apiKey = [];
      }
    }
    const contents = [operation.requestBody, ...Object.values(operation.responses ?? {})].flatMap((body) =>
      Object.entries(body?.content ?? {}),
    );
    for (const [type, media] of contents) {
      if (!media.schema) continue;
      if (type === "application/json") media.example ??= examples.of(media.schema);
      else media.schema.contentMediaType ??= type;
    }
  }
  return completed;
}

/** Text that matches a `pattern` the API uses for identifiers, tried when a schema has no example. */
const PATTERNED = ["01JD5Q3V7Y8N2M4K6P9R0S1T2V"];

const FORMATS: Record<string, string> = {
  "date-time": "2026-11-22T06:00:00.000Z",
  uri: "https://video-api.example.com/",
  email: "ada@example.com",
};

/** An example value for a JSON Schema, from what the schema itself says. */
class Examples {
  constructor(private readonly components: Record<string, Schema>) {}

  of(schema: Schema, depth = 0): unknown {
    if (depth > 12) return null;
    if (schema.$ref) return this.of(this.components[schema.$ref.split("/").pop() ?? ""] ?? {}, depth + 1);
    if (schema.example !== undefined) return schema.example;
    if (schema.examples?.length) return schema.examples[0];
    if (schema.const !== undefined) return schema.const;
    if (schema.enum?.length) return schema.enum.find((value) => value !== null) ?? null;
    if (schema.default !== undefined) return schema.default;
    const variants = schema.anyOf ?? schema.oneOf;
    if (variants?.length) {
      const variant = variants.find((v) => v.type !== "null") ?? variants[0];
      return variant ? this.of(variant, depth + 1) : null;
    }
    if (schema.allOf?.length) {
      return Object.assign({}, ...schema.allOf.map((part) => this.of(part, depth + 1) as object));
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const type = types.find((t) => t !== "null") ?? types[0];
    switch (type) {
      case "object":
        return Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([name, property]) => [name, this.of(property, depth + 1)]),
        );
      case "array": {
        const items = schema.items ?? {};
        const count = Math.max(1, schema.minItems ?? 0);
        const choices = this.resolve(items).enum;
        // Distinct values where the items are a closed set (lists of them must not repeat).
        if (choices && choices.length >= count) return choices.slice(0, count);
        return Array.from({ length: count }, () => this.of(items, depth + 1));
      }
      case "string": {
        if (schema.format && FORMATS[schema.format]) return FORMATS[schema.format];
        if (schema.pattern) {
          const pattern = new RegExp(schema.pattern, "u");
          const match = PATTERNED.find((candidate) => pattern.test(candidate));
          if (match) return match;
        }
        const text = "string";
        const min = schema.minLength ?? 0;
        return text.length >= min ? text.slice(0, schema.maxLength ?? text.length) : text.padEnd(min, "x");
      }
      case "integer":
      case "number":
        return schema.minimum ?? Math.min(0, schema.maximum ?? 0);
      case "boolean":
        return true;
      case "null":
        return null;
      default:
        return null;
    }
  }

  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; current.$ref && hops < 12; hops++) {
      current = this.components[current.$ref.split("/").pop() ?? ""] ?? {};
    }
    return current;
  }
}

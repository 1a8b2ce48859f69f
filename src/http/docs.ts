import { ERRORS, type ErrorCode } from "./errors";

/**
 * The reference page at /docs, rendered on the server from the OpenAPI document itself: no
 * script and nothing from the network, so it works offline and behind firewalls, and it cannot
 * say anything the document does not.
 */

/** The parts of a JSON Schema (OpenAPI 3.1) that the page, and the fuzzer, read. */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  description?: string;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
};
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: Schema };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { description?: string; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
};
type Document = {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, { description?: string }> };
};

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

/** Escaped prose, with `code` spans as the document writes them. */
function prose(text: string | undefined): string {
  return escapeHtml(text ?? "").replace(/`([^`]+)`/g, "<code>$1</code>");
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

class Renderer {
  constructor(private readonly doc: Document) {}

  resolve(schema: Schema | undefined): Schema {
    let current = schema ?? {};
    while (current.$ref) current = this.doc.components?.schemas?.[current.$ref.split("/").pop() ?? ""] ?? {};
    return current;
  }

  /** A schema's type in a few words: "string (ULID)", "integer 1–100", "one of a, b", "array of object". */
  typeOf(raw: Schema | undefined): string {
    const schema = this.resolve(raw);
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    if (schema.enum) {
      const values = schema.enum.map((value) => JSON.stringify(value));
      return values.length === 1 ? (values[0] ?? "") : `one of ${values.join(", ")}`;
    }
    const choices = schema.anyOf ?? schema.oneOf;
    if (choices) return [...new Set(choices.map((choice) => this.typeOf(choice)))].join(" or ");
    const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? "any"];
    return types
      .map((type) => {
        if (type === "array") return `array of ${this.typeOf(schema.items)}`;
        const limits: string[] = [];
        if (schema.format) limits.push(schema.format);
        if (schema.pattern?.includes("0-7")) limits.push("ULID");
        if (schema.minimum !== undefined || schema.maximum !== undefined)
          limits.push(`${schema.minimum ?? ""}–${schema.maximum ?? ""}`);
        if (schema.minLength !== undefined || schema.maxLength !== undefined)
          limits.push(`${schema.minLength ?? 0}–${schema.maxLength ?? "…"} chars`);
        return limits.length > 0 ? `${type} (${limits.join(", ")})` : type;
      })
      .join(" or ");
  }

  /** Rows of a body's fields, nested fields named by their dotted path. */
  fieldRows(raw: Schema | undefined, prefix = "", depth = 0): string[] {
    const schema = this.resolve(raw);
    if (depth > 5) return [];
    const nested = (field: Schema, name: string) => {
      const inner = this.resolve(field);
      const [variants, path] =
        inner.type === "array" ? [this.objects(inner.items), `${name}[].`] : [this.objects(inner), `${name}.`];
      return [...new Set(variants.flatMap((variant) => this.fieldRows(variant, path, depth + 1)))];
    };
    return Object.entries(schema.properties ?? {}).flatMap(([key, field]) => {
      const name = `${prefix}${key}`;
      const resolved = this.resolve(field);
      const required = schema.required?.includes(key) ? "yes" : "no";
      const description = prose(field.description ?? resolved.description);
      return [
        `<tr><td><code>${escapeHtml(name)}</code></td><td>${escapeHtml(this.typeOf(field))}</td><td>${required}</td><td>${description}</td></tr>`,
        ...nested(field, name),
      ];
    });
  }

  /** The object shapes a schema can take: itself, or each variant of a union (bulk's actions, say). */
  objects(raw: Schema | undefined): Schema[] {
    const schema = this.resolve(raw);
    if (schema.properties) return [schema];
    return (schema.anyOf ?? schema.oneOf ?? []).map((variant) => this.resolve(variant)).filter((v) => v.properties);
  }

  fields(schema: Schema | undefined): string {
    // Every variant's fields, each once.
    const rows = [...new Set(this.objects(schema).flatMap((variant) => this.fieldRows(variant)))];
    if (rows.length === 0) return `<p class="type">${escapeHtml(this.typeOf(schema))}</p>`;
    return `<table><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr>${rows.join("")}</table>`;
  }

  auth(op: Operation): string {
    const ways = (op.security ?? []).map((requirement) =>
      Object.entries(requirement)
        .map(([scheme, scopes]) => {
          if (scheme === "apiKey") return `API key with <code>${scopes.join(", ") || "any"}</code> scope`;
          if (scheme === "sessionCookie") return "session cookie";
          return "operator token";
        })
        .join(" and "),
    );
    const text = ways.length === 0 ? "none" : ways.join(", or ");
    const note = ways.some((way) => way.startsWith("API key")) && ways.includes("session cookie");
    return `<p class="auth"><b>Auth:</b> ${text}${note ? " (with the cookie, video operations also take <code>?projectId=</code>)" : ""}</p>`;
  }

  parameters(op: Operation): string {
    if (!op.parameters?.length) return "";
    const rows = op.parameters.map(
      (p) =>
        `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${escapeHtml(this.typeOf(p.schema))}</td>` +
        `<td>${p.required ? "yes" : "no"}</td><td>${prose(p.description ?? p.schema?.description)}</td></tr>`,
    );
    return `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Description</th></tr>${rows.join("")}</table>`;
  }

  body(op: Operation): string {
    const content = op.requestBody?.content ?? {};
    const types = Object.keys(content);
    if (types.length === 0) return "";
    const json = content["application/json"];
    const description = op.requestBody?.description ? `<p>${prose(op.requestBody.description)}</p>` : "";
    if (json) return `<h4>Request body <small>application/json</small></h4>${description}${this.fields(json.schema)}`;
    return `<h4>Request body <small>${types.map(escape).join(", ")}</small></h4><p>Raw bytes.</p>${description}`;
  }

  responses(op: Operation): string {
    const entries = Object.entries(op.responses ?? {});
    const success = entries
      .filter(([status]) => Number(status) < 400)
      .map(([status, response]) => {
        const schema = response.content?.["application/json"]?.schema;
        return `<h4>Response ${status}</h4><p>${prose(response.description)}</p>${schema ? this.fields(schema) : ""}`;
      });
    const errors = entries
      .filter(([status]) => Number(status) >= 400)
      .map(([status, response]) => {
        const code = this.resolve(response.content?.["application/json"]?.schema).properties?.error;
        const codes = (this.resolve(code).properties?.code?.enum ?? []) as string[];
        return `<tr><td>${status}</td><td>${codes.map((c) => `<code>${escapeHtml(c)}</code>`).join(", ")}</td></tr>`;
      });
    const errorTable = errors.length
      ? `<h4>Errors</h4><table><tr><th>Status</th><th><code>error.code</code></th></tr>${errors.join("")}</table>`
      : "";
    return success.join("") + errorTable;
  }

  operation(method: string, path: string, op: Operation): string {
    const id = op.operationId ?? slug(`${method} ${path}`);
    return `<section class="op" id="${escapeHtml(id)}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${prose(op.summary)}</p>
${op.description ? `<p>${prose(op.description)}</p>` : ""}
${this.auth(op)}
${this.parameters(op)}${this.body(op)}${this.responses(op)}
</section>`;
  }
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1d1d1f;display:grid;grid-template-columns:17rem 1fr}
nav{position:sticky;top:0;height:100vh;overflow:auto;padding:1rem;background:#f5f5f7;border-right:1px solid #ddd;font-size:13px}
nav h2{font-size:13px;margin:1rem 0 .25rem;text-transform:uppercase;color:#555}
nav a{display:block;color:#1d1d1f;text-decoration:none;padding:1px 0}
nav a:hover{text-decoration:underline}
main{padding:1rem 2rem 4rem;max-width:62rem}
h1{margin-top:0}
h2.tag{margin-top:3rem;border-bottom:2px solid #1d1d1f}
section.op{border:1px solid #ddd;border-radius:6px;padding:.25rem 1rem 1rem;margin:1.5rem 0}
h3 code{font-size:15px}
.method{display:inline-block;min-width:4.2rem;font:700 12px/1.8 ui-monospace,monospace;text-align:center;border-radius:4px;color:#fff;background:#555}
.get{background:#0a7}.post{background:#06c}.put{background:#a60}.patch{background:#85c}.delete{background:#c33}
table{border-collapse:collapse;width:100%;font-size:13px;margin:.25rem 0}
td,th{border-bottom:1px solid #e5e5e5;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#fafafa}
code{font:12.5px ui-monospace,monospace;background:#f2f2f4;padding:0 .2rem;border-radius:3px}
pre{background:#f5f5f7;padding:.75rem;overflow:auto;font-size:12.5px}
h4{margin:1rem 0 .25rem}
.auth{background:#fff8e5;padding:.25rem .5rem;border-radius:4px}
`;

const VERIFY = `import { Webhook } from "standardwebhooks";

// The endpoint's secret, as shown once when it was created: "whsec_…"
const webhook = new Webhook(secret.slice("whsec_".length));
// rawBody: the request body exactly as received (a string), not re-serialized JSON.
const event = webhook.verify(rawBody, {
  "webhook-id": request.headers.get("webhook-id"),
  "webhook-timestamp": request.headers.get("webhook-timestamp"),
  "webhook-signature": request.headers.get("webhook-signature"),
}); // throws when no signature matches, or the timestamp is more than 5 minutes off
// Deduplicate on webhook-id: every attempt of one event carries the same id.`;

/** The HTML of the reference page for an OpenAPI document this app generated. */
export async function renderDocs(openapi: object): Promise<string> {
  // Read through the narrow view above: only what the page shows.
  const doc = openapi as Document;
  const renderer = new Renderer(doc);
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const tags = (doc.tags ?? []).map((tag) => ({
    ...tag,
    operations: operations.filter(({ op }) => op.tags?.includes(tag.name)),
  }));
  const nav = tags
    .map(
      (tag) =>
        `<h2><a href="#tag-${slug(tag.name)}">${escapeHtml(tag.name)}</a></h2>` +
        tag.operations
          .map(
            ({ method, path, op }) =>
              `<a href="#${escapeHtml(op.operationId ?? "")}"><b>${method.toUpperCase()}</b> ${escapeHtml(path)}</a>`,
          )
          .join(""),
    )
    .join("");
  const errorRows = (Object.entries(ERRORS) as [ErrorCode, { status: number; message: string }][])
    .map(
      ([code, { status, message }]) =>
        `<tr><td><code>${code}</code></td><td>${status}</td><td>${escapeHtml(message)}</td></tr>`,
    )
    .join("");
  const schemes = Object.entries(doc.components?.securitySchemes ?? {})
    .map(([name, scheme]) => `<tr><td><code>${name}</code></td><td>${prose(scheme.description)}</td></tr>`)
    .join("");
  const webhooks = Object.entries(doc.webhooks ?? {}).flatMap(([name, methods]) =>
    Object.entries(methods).map(([method, op]) => renderer.operation(method, name, op)),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(doc.info.title)} reference</title>
<style>${STYLE}</style>
</head>
<body>
<nav>
<b>${escapeHtml(doc.info.title)}</b> <small>${escapeHtml(doc.info.version)}</small>
<h2><a href="#overview">Overview</a></h2>
<a href="#auth">Authentication</a><a href="#errors">Errors</a><a href="#webhooks">Webhooks and signatures</a>
${nav}
</nav>
<main>
<h1 id="overview">${escapeHtml(doc.info.title)} <small>${escapeHtml(doc.info.version)}</small></h1>
<p>${prose(doc.info.description)}</p>
<p>The machine-readable document: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p>
<h2 id="auth">Authentication</h2>
<table><tr><th>Scheme</th><th>What it is</th></tr>${schemes}</table>
<p>Each operation below says which it takes. A key needs <code>write</code> scope for writes and <code>read</code> or <code>write</code> for reads.</p>
<h2 id="errors">Errors</h2>
<p>Every error is <code>{"error": {"code", "message", "requestId", "details"?}}</code>. The codes:</p>
<table><tr><th>Code</th><th>Status</th><th>Meaning</th></tr>${errorRows}</table>
${tags
  .map(
    (tag) =>
      `<h2 class="tag" id="tag-${slug(tag.name)}">${escapeHtml(tag.name)}</h2><p>${prose(tag.description)}</p>` +
      tag.operations.map(({ method, path, op }) => renderer.operation(method, path, op)).join(""),
  )
  .join("")}
<h2 class="tag" id="webhooks">Webhooks and signatures</h2>
<p>Events are POSTed to your endpoints, signed as Standard Webhooks. Verify each delivery before you trust it:</p>
<pre>${escapeHtml(VERIFY)}</pre>
${webhooks.join("")}
</main>
</body>
</html>`;
}

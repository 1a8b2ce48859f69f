import { html, raw } from "hono/html";

type Operation = {
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string }>;
};
type Document = { info: { title: string; version: string }; paths?: object };

function schemaText(schema: unknown): string {
  return JSON.stringify(schema, null, 2);
}

/** A plain, dependency-free reference page rendered from the OpenAPI document. */
export function renderDocs(doc: Document) {
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Operation>).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      op,
    })),
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.info.title} reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h2{margin-top:2.5rem;font-size:1.05rem;font-family:ui-monospace,monospace}
.m{display:inline-block;min-width:4.5rem;font-weight:700}
pre{background:#f5f5f7;padding:.75rem;overflow:auto;font-size:12px}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;text-align:left;vertical-align:top}
</style>
</head>
<body>
<h1>${doc.info.title} <small>${doc.info.version}</small></h1>
<p>Machine-readable document: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
${operations.map(
  ({ path, method, op }) => html`<section>
<h2><span class="m">${method}</span>${path}</h2>
<p>${op.summary ?? ""}</p>
${
  op.parameters?.length
    ? html`<table><tr><th>Parameter</th><th>In</th><th>Required</th></tr>${op.parameters.map(
        (p) => html`<tr><td>${p.name}</td><td>${p.in}</td><td>${p.required ? "yes" : "no"}</td></tr>`,
      )}</table>`
    : ""
}
${Object.entries(op.requestBody?.content ?? {}).map(
  ([type, body]) => html`<p>Body (${type}):</p><pre>${raw(escapeHtml(schemaText(body.schema ?? {})))}</pre>`,
)}
<table><tr><th>Status</th><th>Meaning</th></tr>${Object.entries(op.responses ?? {}).map(
    ([status, response]) => html`<tr><td>${status}</td><td>${response.description ?? ""}</td></tr>`,
  )}</table>
</section>`,
)}
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

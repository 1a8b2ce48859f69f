/**
 * The reference page at /docs: Scalar's API reference (search, request and response examples,
 * code samples in many languages, a request runner), reading /v1/openapi.json. Its script is
 * served from this Worker's static assets (`public/vendor/`, copied from npm by
 * scripts/build-assets.ts), and everything that would reach another origin is switched off: the
 * default fonts (system fonts instead), telemetry, the AI agent and MCP links, and the request proxy (requests
 * from the page go straight to this origin). test/e2e/docs.test.ts checks that no request leaves.
 */
export const SCALAR_SCRIPT = "/vendor/scalar/api-reference.js";

const CONFIGURATION = {
  url: "/v1/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  proxyUrl: "",
  externalUrls: { dashboardUrl: "", registryUrl: "", proxyUrl: "", apiBaseUrl: "" },
  showDeveloperTools: "never",
  hideClientButton: false,
  persistAuth: false,
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  documentDownloadType: "json",
};

/** The HTML of the reference page; `title` is the document's. */
export function docsPage(title: string): string {
  const escaped = title.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  // JSON in a script element: `<` escaped so no value can close the element.
  const configuration = JSON.stringify(CONFIGURATION).replaceAll("<", "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escaped} reference</title>
</head>
<body>
<noscript>This reference needs JavaScript. The document it shows: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</noscript>
<div id="app"></div>
<script src="${SCALAR_SCRIPT}"></script>
<script>Scalar.createApiReference("#app", ${configuration});</script>
</body>
</html>`;
}

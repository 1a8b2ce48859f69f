/**
 * The dashboard's one HTML page (docs/dashboard.md): a shell that loads the dashboard's script
 * and style from this Worker's static assets (scripts/build-assets.ts bundles `dashboard/` there),
 * and the Content-Security-Policy that holds it to this origin: no inline script, no eval, nothing
 * from elsewhere, never framed.
 */
export const DASHBOARD_PATH = "/dashboard";
export const DASHBOARD_SCRIPT = "/vendor/dashboard/dashboard.js";
export const DASHBOARD_STYLE = "/vendor/dashboard/dashboard.css";

/**
 * `origin` is where public URLs point (PUBLIC_BASE_URL, else the request's own): tus upload URLs,
 * thumbnails, the embed page. It is `'self'` locally, and named when the API's public origin is
 * another host than the dashboard's.
 */
export function contentSecurityPolicy(origin: string, self: string): string {
  const sources = origin === self ? "'self'" : `'self' ${origin}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${sources} data: blob:`,
    `connect-src ${sources}`,
    `frame-src ${sources}`,
    `media-src ${sources} blob:`,
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function dashboardPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Dashboard</title>
<link rel="stylesheet" href="${DASHBOARD_STYLE}">
<script type="module" src="${DASHBOARD_SCRIPT}"></script>
</head>
<body>
<div id="app"><main><h1>Dashboard</h1><p>Loading…</p><noscript><p>The dashboard needs JavaScript.</p></noscript></main></div>
</body>
</html>`;
}

/**
 * Whether a `GET /` comes from a browser: an `Accept` that lists `text/html` before
 * `application/json`, or lists `text/html` without it (docs/dashboard.md).
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(",").map((entry) => (entry.split(";")[0] ?? "").trim().toLowerCase());
  const html = types.indexOf("text/html");
  const json = types.indexOf("application/json");
  return html !== -1 && (json === -1 || html < json);
}

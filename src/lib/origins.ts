/**
 * Allowed origins (docs/import-clips-search.md#allowed-origins-allowedorigins): a video's, or a
 * playback token's, list of `scheme://host[:port]` patterns, `*.` allowed only as the host's first
 * label; `[]` allows any. One module decides both what a valid pattern is and whether a request's
 * origin is allowed, for /play/ and /embed/ alike.
 */

export const MAX_ALLOWED_ORIGINS = 10;

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const PATTERN = new RegExp(`^(https?)://((?:\\*\\.)?${LABEL}(?:\\.${LABEL})*)(?::(\\d{1,5}))?$`);

/**
 * The canonical spelling of an origin pattern (lower case, no default port), or null when it is not
 * one: a scheme and a host, `*.` only as the first label, no path, query or credentials.
 */
export function normalizeOriginPattern(pattern: string): string | null {
  const match = PATTERN.exec(pattern.toLowerCase());
  if (!match) return null;
  const [, scheme, host, port] = match;
  if (port !== undefined) {
    const number = Number(port);
    if (number < 1 || number > 65_535) return null;
    if ((scheme === "https" && number === 443) || (scheme === "http" && number === 80)) return `${scheme}://${host}`;
    return `${scheme}://${host}:${number}`;
  }
  return `${scheme}://${host}`;
}

/** The origin a request comes from: its `Origin`, else its `Referer`'s origin; null when it names neither. */
export function requestOrigin(headers: Headers): string | null {
  const origin = headers.get("origin");
  if (origin !== null && origin !== "" && origin !== "null") return canonicalOrigin(origin);
  // An opaque origin ("null": a sandboxed frame, a file) is no origin of any list.
  if (origin === "null") return "null";
  const referer = headers.get("referer");
  if (referer === null || referer === "") return null;
  return canonicalOrigin(referer);
}

function canonicalOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.origin === "null" ? "null" : parsed.origin;
  } catch {
    return "null";
  }
}

/** Whether `origin` (canonical, as `requestOrigin` gives) fits `pattern` (as `normalizeOriginPattern` gives). */
function fits(pattern: string, origin: string): boolean {
  const star = pattern.indexOf("://*.");
  if (star === -1) return pattern === origin;
  // `https://*.example.com` is any subdomain of example.com (at any depth), over the same scheme and port.
  const scheme = pattern.slice(0, star + 3);
  const rest = pattern.slice(star + 4);
  if (!origin.startsWith(scheme)) return false;
  const host = origin.slice(scheme.length);
  return host.endsWith(rest) && host.length > rest.length;
}

/**
 * Whether a request with these headers may play: any when the list is empty or the request names
 * no origin (native apps send neither header), else only an origin of the list or `ownOrigin` (the
 * service's own pages: the embed page plays from there).
 */
export function originAllowed(allowedOrigins: readonly string[], headers: Headers, ownOrigin?: string): boolean {
  if (allowedOrigins.length === 0) return true;
  const origin = requestOrigin(headers);
  if (origin === null || origin === ownOrigin) return true;
  return allowedOrigins.some((pattern) => fits(pattern, origin));
}

/**
 * The allowed origins as a CSP `frame-ancestors` source list, `ownOrigin` (the service's own pages:
 * its dashboard shows every video's player) first; `*` when any may frame.
 */
export function frameAncestors(allowedOrigins: readonly string[], ownOrigin: string): string {
  return allowedOrigins.length === 0 ? "*" : [ownOrigin, ...allowedOrigins].join(" ");
}

/** The dashboard's views, by path under /dashboard (one page; the browser's history moves between them). */
export type Route =
  | { view: "home" }
  | { view: "account" }
  | { view: "operator" }
  | { view: "videos"; projectId: string }
  | { view: "video"; projectId: string; videoId: string }
  | { view: "keys"; projectId: string }
  | { view: "webhooks"; projectId: string }
  | { view: "deliveries"; projectId: string; endpointId: string }
  | { view: "settings"; projectId: string }
  | { view: "analytics"; projectId: string }
  | { view: "missing" };

export const BASE = "/dashboard";

const ID = "([0-9A-Za-z]{26})";
const PATTERNS: [RegExp, (match: string[]) => Route][] = [
  [/^\/?$/, () => ({ view: "home" })],
  [/^\/account\/?$/, () => ({ view: "account" })],
  [/^\/operator\/?$/, () => ({ view: "operator" })],
  [new RegExp(`^/projects/${ID}/?$`), ([, projectId = ""]) => ({ view: "videos", projectId })],
  [
    new RegExp(`^/projects/${ID}/videos/${ID}/?$`),
    ([, projectId = "", videoId = ""]) => ({ view: "video", projectId, videoId }),
  ],
  [new RegExp(`^/projects/${ID}/api-keys/?$`), ([, projectId = ""]) => ({ view: "keys", projectId })],
  [new RegExp(`^/projects/${ID}/webhooks/?$`), ([, projectId = ""]) => ({ view: "webhooks", projectId })],
  [
    new RegExp(`^/projects/${ID}/webhooks/${ID}/?$`),
    ([, projectId = "", endpointId = ""]) => ({ view: "deliveries", projectId, endpointId }),
  ],
  [new RegExp(`^/projects/${ID}/encoding-settings/?$`), ([, projectId = ""]) => ({ view: "settings", projectId })],
  [new RegExp(`^/projects/${ID}/analytics/?$`), ([, projectId = ""]) => ({ view: "analytics", projectId })],
];

/** The view a path under /dashboard shows; any other path is `missing`. */
export function parseRoute(pathname: string): Route {
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) return { view: "missing" };
  const rest = pathname.slice(BASE.length);
  for (const [pattern, build] of PATTERNS) {
    const match = pattern.exec(rest);
    if (match) return build([...match]);
  }
  return { view: "missing" };
}

/** Paths of the views, so links are built in one place. */
export const paths = {
  home: () => BASE,
  account: () => `${BASE}/account`,
  operator: () => `${BASE}/operator`,
  videos: (projectId: string) => `${BASE}/projects/${projectId}`,
  video: (projectId: string, videoId: string) => `${BASE}/projects/${projectId}/videos/${videoId}`,
  keys: (projectId: string) => `${BASE}/projects/${projectId}/api-keys`,
  webhooks: (projectId: string) => `${BASE}/projects/${projectId}/webhooks`,
  deliveries: (projectId: string, endpointId: string) => `${BASE}/projects/${projectId}/webhooks/${endpointId}`,
  settings: (projectId: string) => `${BASE}/projects/${projectId}/encoding-settings`,
  analytics: (projectId: string) => `${BASE}/projects/${projectId}/analytics`,
};

import { E2E_ADMIN_TOKEN } from "./server.ts";

/** A small HTTP client that keeps a session cookie, as a browser or an SDK would. */
export class Client {
  cookie: string | undefined;
  ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { "cf-connecting-ip": this.ip, ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    let body: BodyInit | undefined;
    if (options.body instanceof Uint8Array) {
      body = options.body.slice();
      headers["content-type"] ??= "application/octet-stream";
    } else if (options.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = JSON.stringify(options.body);
    }
    const started = performance.now();
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const headersMs = performance.now() - started;
    const setCookie = response.headers.get("set-cookie");
    if (setCookie?.startsWith("svc_session=")) {
      const value = setCookie.split(";")[0];
      this.cookie = value === "svc_session=" ? undefined : value;
    }
    const text = await response.text();
    const json = text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, json, text, headersMs };
  }

  /** Signs up, has the operator approve, and logs in. */
  async onboard(email = `e2e-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`) {
    const password = "e2e password 123";
    const signup = await this.request("POST", "/v1/auth/signup", { body: { email, password } });
    if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`);
    const approve = await this.request("POST", `/v1/admin/accounts/${signup.json.id}/approve`, {
      headers: { authorization: `Bearer ${E2E_ADMIN_TOKEN}` },
    });
    if (approve.status !== 200) throw new Error(`approve: ${approve.status} ${approve.text}`);
    const login = await this.request("POST", "/v1/auth/login", { body: { email, password } });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    return signup.json as { id: string };
  }
}

/**
 * An approved owner with one project and `keys` live write keys, and `call` that acts with them, moving
 * to the next key every 20 calls so no per-caller limit (bulk: 30 a minute) gets in the way.
 */
export async function keyedTenant(baseUrl: string, options: { name?: string; keys?: number } = {}) {
  const owner = new Client(baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name: options.name ?? "tenant" } });
  const projectId = project.json.id as string;
  const keys: string[] = [];
  for (let i = 0; i < (options.keys ?? 1); i++) {
    const key = await owner.request("POST", `/v1/projects/${projectId}/api-keys`, {
      // Live: a test key's videos are encoded from their first 10 s only
      // (docs/api-guide.md#test-mode-and-going-live).
      body: { name: "tenant", scopes: ["read", "write"], mode: "live" },
    });
    keys.push(key.json.key as string);
  }
  const client = new Client(baseUrl);
  let calls = 0;
  const call = (method: string, path: string, body?: unknown) =>
    client.request(method, path, {
      body,
      headers: { authorization: `Bearer ${keys[Math.floor(calls++ / 20) % keys.length]}` },
    });
  /** Adds a webhook endpoint to the project. */
  const endpoint = async (url: string) => {
    const created = await call("POST", `/v1/projects/${projectId}/webhook-endpoints`, { url });
    if (created.status !== 201) throw new Error(`endpoint: ${created.status} ${created.text}`);
    return created.json as { id: string; secret: string };
  };
  return { owner, projectId, keys, call, endpoint };
}

import { exports } from "cloudflare:workers";
import type { z } from "zod";
import "../src/app";
import { ROUTES } from "../src/http/route";

export const ORIGIN = "http://api.test";
export const ADMIN = { authorization: "Bearer test-admin-token" };

let counter = 0;
function unique(): string {
  counter += 1;
  return `${Date.now().toString(36)}${counter}${Math.random().toString(36).slice(2, 8)}`;
}

/** A client address of its own, so per-IP limits on signup and login do not couple tests. */
export function clientIp(): string {
  return `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
}

/** The route configs, with their zod response schemas, by method and a matcher of their path. */
const routes = ROUTES.map((config) => ({
  method: config.method.toUpperCase(),
  pattern: new RegExp(`^${config.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  responses: config.responses as Record<string, { content?: Record<string, { schema?: z.ZodType }> }>,
}));

/**
 * Every 2xx JSON body a test receives is parsed with the route's own response schema, so the
 * documented shape and the real one cannot drift apart unnoticed.
 */
export async function checkBody(method: string, path: string, response: Response): Promise<void> {
  if (response.status < 200 || response.status >= 300) return;
  if (!response.headers.get("content-type")?.includes("application/json")) return;
  const pathname = new URL(path, ORIGIN).pathname;
  const route = routes.find((r) => r.method === method && r.pattern.test(pathname));
  const schema = route?.responses[String(response.status)]?.content?.["application/json"]?.schema;
  if (!schema) return;
  const parsed = schema.safeParse(await response.clone().json());
  if (!parsed.success) {
    throw new Error(`${method} ${pathname} ${response.status}: body does not fit its schema: ${parsed.error.message}`);
  }
}

export async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await exports.default.fetch(new Request(`${ORIGIN}${path}`, init));
  await checkBody((init.method ?? "GET").toUpperCase(), path, response);
  return response;
}

export function json(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

export async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error?: { code?: string } };
  return body.error?.code ?? `(no error code; status ${response.status})`;
}

export type Session = { cookie: string; accountId: string; email: string; password: string };

export async function signUp(email = `user-${unique()}@example.com`, password = "correct horse battery") {
  const response = await api("/v1/auth/signup", json("POST", { email, password }, { "cf-connecting-ip": clientIp() }));
  if (response.status !== 201) throw new Error(`signup failed: ${response.status} ${await response.text()}`);
  return { account: (await response.json()) as { id: string }, email, password };
}

export async function approve(accountId: string): Promise<void> {
  const response = await api(`/v1/admin/accounts/${accountId}/approve`, { method: "POST", headers: ADMIN });
  if (response.status !== 200) throw new Error(`approve failed: ${response.status}`);
}

export async function logIn(email: string, password: string): Promise<string> {
  const response = await api("/v1/auth/login", json("POST", { email, password }, { "cf-connecting-ip": clientIp() }));
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (!cookie) throw new Error("login set no cookie");
  return cookie;
}

/** A logged-in user; approved unless told otherwise. */
export async function newSession({ approved = true } = {}): Promise<Session> {
  const { account, email, password } = await signUp();
  if (approved) await approve(account.id);
  return { cookie: await logIn(email, password), accountId: account.id, email, password };
}

export function withCookie(session: Session, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), cookie: session.cookie } };
}

export async function newProject(session: Session, name = "My project"): Promise<{ id: string; plan: string }> {
  const response = await api("/v1/projects", withCookie(session, json("POST", { name })));
  if (response.status !== 201) throw new Error(`project create failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; plan: string };
}

export async function newKey(
  session: Session,
  projectId: string,
  scopes: ("read" | "write")[] = ["read", "write"],
  mode: "test" | "live" = "live",
): Promise<string> {
  const response = await api(
    `/v1/projects/${projectId}/api-keys`,
    withCookie(session, json("POST", { name: "key", scopes, mode })),
  );
  if (response.status !== 201) throw new Error(`key create failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { key: string }).key;
}

export function bearer(key: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` } };
}

/**
 * A project with a logged-in owner and a read+write key, live unless told otherwise: a test key's
 * videos are encoded from their first 10 s only (docs/api-guide.md#test-mode-and-going-live), which
 * most tests must not meet.
 */
export async function newWorkspace({ mode = "live" }: { mode?: "test" | "live" } = {}) {
  const session = await newSession();
  const project = await newProject(session);
  const key = await newKey(session, project.id, ["read", "write"], mode);
  return { session, project, key };
}

export type VideoBody = {
  id: string;
  projectId: string;
  title: string | null;
  status: string;
  visibility: string;
  thumbnail: { source: string; url: string };
  createdAt: string;
  updatedAt: string;
};

export async function newVideo(key: string, body: Record<string, unknown> = {}) {
  const response = await api("/v1/videos", bearer(key, json("POST", body)));
  if (response.status !== 201) throw new Error(`video create failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { video: VideoBody; upload: { id: string; expiresAt: string } };
}

export async function newVideos(key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await newVideo(key, { title: `video ${i}` })).video.id);
  return ids;
}

import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IMAGES } from "../fixtures/images";
import {
  ADMIN,
  api,
  bearer,
  json,
  newKey,
  newProject,
  newSession,
  newVideo,
  newWorkspace,
  type Session,
  signUp,
  withCookie,
} from "../helpers";
import { type Document, HEADER_VARIANTS, JSON_CONTENT_TYPES, type JsonSchema, mutate, schemaValue } from "./schemas";

/**
 * A property-based fuzzer over every operation of the OpenAPI document: generated and mutated
 * paths, queries, bodies, headers and credentials. Each request must answer without a 5xx, with
 * an x-request-id, and, when it fails, with a JSON error whose code the operation documents for
 * that status. A tenant whose ids the others send, but who sends nothing, must come out unchanged,
 * and so must a project's live objects whose ids its test key sends
 * (docs/api-guide.md#test-mode-and-going-live). `FUZZ_RUNS` and `FUZZ_SEED` (a number, or "random")
 * come from `npm run fuzz`; `npm test` runs a fixed seed.
 */

type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema };
type Operation = {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
};
type OpenApi = Document & { paths: Record<string, Record<string, Operation>> };

const RUNS = Number(env.FUZZ_RUNS ?? 2000);
const SEED = env.FUZZ_SEED === "random" || !env.FUZZ_SEED ? Date.now() % 2 ** 31 : Number(env.FUZZ_SEED);
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The codes an operation documents for a status, read from the document itself. */
function documentedCodes(op: Operation, status: number): string[] | undefined {
  const schema = op.responses?.[String(status)]?.content?.["application/json"]?.schema;
  const code = schema?.properties?.error?.properties?.code;
  return code?.enum as string[] | undefined;
}

async function snapshot(tenant: { accountId: string; projectId: string }) {
  const tables = [
    ["accounts", "id", tenant.accountId],
    ["projects", "account_id", tenant.accountId],
    ["api_keys", "project_id", tenant.projectId],
    ["videos", "project_id", tenant.projectId],
    ["chapters", "project_id", tenant.projectId],
    ["webhook_endpoints", "project_id", tenant.projectId],
    ["encoding_settings", "project_id", tenant.projectId],
  ] as const;
  const rows = await env.DB.batch(
    tables.map(([table, column, value]) =>
      env.DB.prepare(`SELECT * FROM ${table} WHERE ${column} = ? ORDER BY 1`).bind(value),
    ),
  );
  return rows.map((result) => result.results);
}

async function tenant() {
  const { session, project, key } = await newWorkspace();
  const videos = await Promise.all([0, 1, 2].map(async () => (await newVideo(key)).video.id));
  await api(`/v1/videos/${videos[0]}/chapters`, bearer(key, json("PUT", { chapters: [{ start: 0, title: "Kept" }] })));
  const endpoint = await api(
    `/v1/projects/${project.id}/webhook-endpoints`,
    bearer(key, json("POST", { url: "https://hooks.example.com/fuzz" })),
  );
  const endpointId = ((await endpoint.json()) as { id: string }).id;
  // A deleted video gives the endpoint a delivery attempt to list and retry.
  await api(`/v1/videos/${videos[2]}`, bearer(key, { method: "DELETE" }));
  const attempt = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE endpoint_id = ?")
    .bind(endpointId)
    .first<string>("id");
  const keys = await env.DB.prepare("SELECT id FROM api_keys WHERE project_id = ?")
    .bind(project.id)
    .all<{ id: string }>();
  return {
    session,
    key,
    readKey: await newKey(session, project.id, ["read"]),
    accountId: session.accountId,
    projectId: project.id,
    ids: [project.id, ...videos, endpointId, attempt ?? ""].filter(Boolean),
    /** Sent only as another tenant's: revoking the acting tenants' own keys would end the run's coverage. */
    keyIds: keys.results.map((row) => row.id),
  };
}

/**
 * Every row of a project's live objects (docs/api-guide.md#test-mode-and-going-live): what its test
 * key must leave as it is.
 */
async function liveSnapshot(projectId: string) {
  const reads = [
    "SELECT * FROM videos WHERE project_id = ? AND livemode = 1 ORDER BY id",
    "SELECT * FROM tus_uploads WHERE project_id = ? AND livemode = 1 ORDER BY id",
    "SELECT * FROM webhook_endpoints WHERE project_id = ? AND livemode = 1 ORDER BY id",
    `SELECT d.* FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
     WHERE e.project_id = ? AND e.livemode = 1 ORDER BY d.id`,
    `SELECT c.* FROM chapters c JOIN videos v ON v.id = c.video_id
     WHERE v.project_id = ? AND v.livemode = 1 ORDER BY c.video_id`,
  ];
  const rows = await env.DB.batch(reads.map((sql) => env.DB.prepare(sql).bind(projectId)));
  return rows.map((result) => result.results);
}

/**
 * A project whose live key made its live objects and then keeps still, and whose test key acts:
 * the ids it sends include the live objects'.
 */
async function sandbox() {
  const session = await newSession();
  const project = await newProject(session);
  const liveKey = await newKey(session, project.id, ["read", "write"], "live");
  const videos = await Promise.all([0, 1, 2].map(async () => (await newVideo(liveKey)).video.id));
  await api(
    `/v1/videos/${videos[0]}/chapters`,
    bearer(liveKey, json("PUT", { chapters: [{ start: 0, title: "Live" }] })),
  );
  const upload = await api("/v1/uploads", bearer(liveKey, json("POST", {})));
  const endpoint = await api(
    `/v1/projects/${project.id}/webhook-endpoints`,
    bearer(liveKey, json("POST", { url: "https://hooks.example.com/live" })),
  );
  const endpointId = ((await endpoint.json()) as { id: string }).id;
  await api(`/v1/videos/${videos[2]}`, bearer(liveKey, { method: "DELETE" }));
  const attempt = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE endpoint_id = ?")
    .bind(endpointId)
    .first<string>("id");
  return {
    projectId: project.id,
    testKey: await newKey(session, project.id, ["read", "write"], "test"),
    ids: [project.id, ...videos, ((await upload.json()) as { id: string }).id, endpointId, attempt ?? ""].filter(
      Boolean,
    ),
  };
}

describe("fuzzing every operation", () => {
  it(
    `answers ${RUNS} generated requests without a 5xx, each failure with a documented code`,
    async () => {
      console.log(`fuzz: ${RUNS} requests, seed ${SEED} (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run fuzz)`);
      const doc = (await (await api("/v1/openapi.json")).json()) as OpenApi;
      // Two tenants act (their credentials are used); a third only has its ids sent by them.
      const me = await tenant();
      const intruder = await tenant();
      const other = await tenant();
      const modes = await sandbox();
      const spareLogout: Session = await newSession();
      const spareAccount = (await signUp()).account.id;
      const before = await snapshot(other);
      const liveBefore = await liveSnapshot(modes.projectId);

      const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
      );
      expect(operations.length).toBeGreaterThan(30);

      // "." and ".." are not ids a client can send: URL parsing turns them into another path.
      const garbage = fc.oneof(
        fc.string({ minLength: 1, maxLength: 30 }).filter((text) => text !== "." && text !== ".."),
        fc.constant("x".repeat(300)),
        fc.constantFrom("%", "null", "0", "-1", "01ARZ3NDEKTSV4RRFFQ69G5FA", "ZZZZZZZZZZZZZZZZZZZZZZZZZZ"),
      );
      const randomUlid = fc.constantFrom(
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "00000000000000000000000000",
      );
      const ids = fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...me.ids) },
        { weight: 1, arbitrary: fc.constantFrom(...me.ids).map((id) => id.toLowerCase()) },
        { weight: 2, arbitrary: fc.constantFrom(...other.ids, ...other.keyIds, other.accountId) },
        { weight: 1, arbitrary: fc.constantFrom(...intruder.ids) },
        { weight: 2, arbitrary: fc.constantFrom(...modes.ids) },
        { weight: 1, arbitrary: randomUlid },
        { weight: 2, arbitrary: garbage },
      );
      const adminIds = fc.oneof(fc.constant(spareAccount), randomUlid, garbage);
      // Deleting a project ends everything in it, so the acting tenants' own projects are never the
      // target (the run would lose its coverage): spare projects of the caller are, and the others'.
      const spareProjects = await Promise.all([0, 1, 2].map(async () => (await newProject(me.session)).id));
      const deletableProjects = fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...spareProjects) },
        { weight: 1, arbitrary: fc.constantFrom(...spareProjects).map((id) => id.toLowerCase()) },
        { weight: 2, arbitrary: fc.constantFrom(other.projectId, ...other.ids) },
        { weight: 1, arbitrary: randomUlid },
        { weight: 2, arbitrary: garbage },
      );
      // Mostly the caller's own credentials, so requests get past authentication and go deep.
      const credentials = fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("key", "session") },
        { weight: 1, arbitrary: fc.constantFrom("readKey", "intruderKey", "intruderSession") },
        { weight: 1, arbitrary: fc.constant("sandboxTestKey") },
        { weight: 1, arbitrary: fc.constantFrom("none", "garbage", "admin") },
      );
      const png = IMAGES.rgbPng;

      const request = fc.constantFrom(...operations).chain((operation) => {
        const { op, path } = operation;
        const params = op.parameters ?? [];
        const pathValues = fc.record(
          Object.fromEntries(
            params
              .filter((p) => p.in === "path")
              .map((p) => [
                p.name,
                path.startsWith("/v1/admin")
                  ? adminIds
                  : operation.op.operationId === "deleteProject"
                    ? deletableProjects
                    : ids,
              ]),
          ),
        );
        const query = fc.array(
          fc.oneof(
            ...params
              .filter((p) => p.in === "query")
              .flatMap((p) => [
                schemaValue(doc, p.schema ?? {}, ids).map((value) => queryPair(p.name, value)),
                (p.name === "projectId" ? fc.constant(me.projectId) : garbage).map((value) => [p.name, value] as const),
                mutate(null).map((value) => [p.name, JSON.stringify(value).slice(0, 500)] as const),
              ]),
            fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })),
          ),
          { maxLength: 4 },
        );
        const content = op.requestBody?.content ?? {};
        const jsonSchema = content["application/json"]?.schema;
        const binaryTypes = Object.keys(content).filter((type) => type !== "application/json");
        const body: fc.Arbitrary<{ type?: string; data?: BodyInit }> = jsonSchema
          ? schemaValue(doc, jsonSchema, ids).chain((valid) =>
              fc.oneof(
                fc.constant({ type: "application/json", data: JSON.stringify(valid) }),
                mutate(valid).map((bad) => ({ type: "application/json", data: JSON.stringify(bad) ?? "" })),
                fc
                  .constantFrom("{", "", "[]", "null", '{"a":1}'.repeat(3))
                  .map((data) => ({ type: "application/json", data })),
                fc.constant({ type: "text/plain", data: JSON.stringify(valid) }),
                fc.constantFrom(...JSON_CONTENT_TYPES).map((type) => ({ type, data: JSON.stringify(valid) })),
                fc.constant({}),
              ),
            )
          : binaryTypes.length > 0
            ? fc.oneof(
                fc.constantFrom(...binaryTypes).map((type) => ({ type, data: png })),
                fc
                  .constantFrom(...binaryTypes)
                  .chain((type) => fc.uint8Array({ maxLength: 200 }).map((data) => ({ type, data }))),
                fc.constant({ type: "image/gif", data: png }),
                fc.constant({ type: "image/png", data: new Uint8Array(0) }),
                fc.constant({}),
              )
            : fc.oneof(fc.constant({}), fc.constant({ type: "application/json", data: "{}" }));
        return fc.record({
          operation: fc.constant(operation),
          pathValues,
          query,
          credential: path.startsWith("/v1/admin")
            ? fc.oneof({ weight: 4, arbitrary: fc.constant("admin") }, { weight: 1, arbitrary: credentials })
            : credentials,
          origin: fc.constantFrom(undefined, "https://dashboard.example", "https://evil.example"),
          ip: fc.constantFrom("203.0.113.1", "203.0.113.2", "2001:db8::1"),
          body,
          extra: fc.oneof(
            { weight: 3, arbitrary: fc.constant({}) },
            { weight: 1, arbitrary: fc.constantFrom(...HEADER_VARIANTS) },
          ),
        });
      });

      const statuses = new Map<number, number>();
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(request, async ({ operation, pathValues, query, credential, origin, ip, body, extra }) => {
          const { op, method } = operation;
          let path = operation.path;
          for (const [name, value] of Object.entries(pathValues)) {
            path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
          }
          const search = new URLSearchParams(query.map(([k, v]) => [k, v]));
          const url = search.size > 0 ? `${path}?${search}` : path;
          const headers: Record<string, string> = { "cf-connecting-ip": ip, ...extra };
          if (origin) headers.origin = origin;
          if (body.type) headers["content-type"] = body.type;
          const session =
            operation.path === "/v1/auth/logout"
              ? spareLogout
              : credential === "intruderSession"
                ? intruder.session
                : me.session;
          if (credential === "key") headers.authorization = `Bearer ${me.key}`;
          if (credential === "readKey") headers.authorization = `Bearer ${me.readKey}`;
          if (credential === "intruderKey") headers.authorization = `Bearer ${intruder.key}`;
          if (credential === "sandboxTestKey") headers.authorization = `Bearer ${modes.testKey}`;
          if (credential === "garbage") headers.authorization = "Bearer svc_live_not-a-key";
          if (credential === "admin") headers.authorization = ADMIN.authorization;
          if (credential === "session" || credential === "intruderSession") headers.cookie = session.cookie;
          const init: RequestInit = { method, headers };
          if (body.data !== undefined && method !== "GET") init.body = body.data;
          const response = await api(url, init);
          sent += 1;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          const text = await response.text();
          const where = `${method} ${url} (${credential}) -> ${response.status} ${text.slice(0, 300)}`;
          expect(response.status, where).toBeLessThan(500);
          expect(response.headers.get("x-request-id") ?? "", where).toMatch(ULID);
          if (response.status >= 400) {
            const code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
            expect(documentedCodes(op, response.status) ?? [], where).toContain(code);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );

      expect(await snapshot(other)).toEqual(before);
      expect(await liveSnapshot(modes.projectId)).toEqual(liveBefore);
      // Other tenants' sessions still work: nothing the fuzzer sent ended them.
      expect((await api("/v1/account", withCookie(other.session))).status).toBe(200);
      console.log(`fuzz: ${sent} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
      expect(sent).toBeGreaterThanOrEqual(RUNS);
    },
    Math.max(180_000, RUNS * 100),
  );
});

/**
 * A generated query value as one `name=value` pair: an object (a `deepObject` parameter such as
 * `metadata[key]=value`) by its first entry, anything else as its string.
 */
function queryPair(name: string, value: unknown): readonly [string, string] {
  if (typeof value !== "object" || value === null) return [name, String(value)] as const;
  const [entry] = Object.entries(value);
  return entry ? ([`${name}[${entry[0]}]`, JSON.stringify(entry[1]).replace(/^"|"$/g, "")] as const) : [name, ""];
}

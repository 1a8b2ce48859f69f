// The work some routes cannot do without, and nothing else (no router, no validation, no JSON
// answers): what `npm run bench:floor` and `npm run bench`'s playback comparison time beside a bare
// 404 of the same Worker. It uses the service's own RateLimiter, so the limiter's call costs what it
// costs in the service.
import { RateLimiter } from "../../src/rate-limit/limiter";

export { RateLimiter };

type FloorEnv = { DB: D1Database; MEDIA: R2Bucket; RATE_LIMITER: DurableObjectNamespace<RateLimiter> };

/** The limiter's call as the service makes it: a caller's bucket and its tenant's, in one object. */
function count(env: FloorEnv, policy: string) {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("account:floor"));
  return limiter.consume({
    policy,
    windowSeconds: 60,
    buckets: [
      { subject: "session:floor", limit: 1_000_000 },
      { subject: "project:floor", limit: 10_000_000 },
    ],
  });
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const { pathname } = new URL(request.url);
    const credential = env.DB.prepare("SELECT id FROM credentials WHERE hash = ?").bind("floor");
    switch (pathname) {
      case "/setup":
        await env.DB.batch([
          env.DB.prepare("CREATE TABLE IF NOT EXISTS credentials (hash TEXT PRIMARY KEY, id TEXT)"),
          env.DB.prepare("CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, image TEXT, doc TEXT)"),
          env.DB.prepare("INSERT OR IGNORE INTO credentials VALUES ('floor', 'a')"),
          env.DB.prepare("INSERT OR IGNORE INTO records VALUES ('r', NULL, '{}')"),
          env.DB.prepare(
            "CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, state TEXT, created_at TEXT, doc TEXT)",
          ),
          env.DB.prepare(
            `INSERT OR IGNORE INTO items WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
             SELECT printf('item%03d', i), 'public', printf('2026-01-01T00:00:%02d.000Z', i % 60), '{"title":"an item"}' FROM n`,
          ),
        ]);
        return new Response("ready");
      case "/read": {
        // A read of one row by a caller (GET /v1/videos/{id}): authenticate, read, answer its JSON.
        await credential.first();
        const row = await env.DB.prepare("SELECT * FROM items WHERE id = ?").bind("item001").first();
        return Response.json(row);
      }
      case "/visibility": {
        // A bulk set_visibility of 100 ids: authenticate, count, receive the JSON, one UPDATE, answer.
        await credential.first();
        await count(env, "bulk");
        const { ids, state } = (await request.json()) as { ids: string[]; state: string };
        const { results } = await env.DB.prepare(
          "UPDATE items SET state = ? WHERE id IN (SELECT value FROM json_each(?)) RETURNING id",
        )
          .bind(state, JSON.stringify(ids))
          .all<{ id: string }>();
        return Response.json({ results: results.map((row) => ({ id: row.id, ok: true })) });
      }
      case "/page": {
        // A page of 100 rows (GET …/deliveries?limit=100): authenticate, count, read, answer.
        await credential.first();
        await count(env, "deliveries");
        const { results } = await env.DB.prepare(
          "SELECT * FROM items ORDER BY created_at DESC, id DESC LIMIT 101",
        ).all();
        return Response.json({ data: results.slice(0, 100), nextCursor: null });
      }
      case "/thumbnail": {
        // Authenticate, count, receive the bytes, store them, point the record at them, delete the old image.
        await credential.first();
        await count(env, "thumbnail");
        const bytes = await request.arrayBuffer();
        const key = `floor/${crypto.randomUUID()}.png`;
        await env.MEDIA.put(key, bytes, { httpMetadata: { contentType: "image/png" } });
        const [before] = await env.DB.batch<{ image: string | null }>([
          env.DB.prepare("SELECT image FROM records WHERE id = 'r'"),
          env.DB.prepare("UPDATE records SET image = ? WHERE id = 'r'").bind(key),
        ]);
        const old = before?.results[0]?.image;
        if (old) await env.MEDIA.delete(old);
        return new Response(null, { status: 204 });
      }
      case "/patch": {
        // Authenticate, count, receive the JSON, merge it in one statement.
        await credential.first();
        await count(env, "encoding_settings");
        const patch = await request.text();
        await env.DB.prepare("UPDATE records SET doc = json_patch(doc, ?) WHERE id = 'r' RETURNING doc")
          .bind(patch)
          .first();
        return new Response(null, { status: 204 });
      }
      case "/seed": {
        // Stores the request's bytes under `key`: the objects `/object` then reads (not timed).
        const key = new URL(request.url).searchParams.get("key") ?? "";
        const contentType = request.headers.get("content-type") ?? "application/octet-stream";
        const bytes = await request.arrayBuffer();
        if (!new URL(request.url).searchParams.has("multipart")) {
          await env.MEDIA.put(key, bytes, { httpMetadata: { contentType } });
          return new Response(null, { status: 204 });
        }
        // As the service stores an MP4: a multipart upload, in parts of `multipart` bytes.
        const partBytes = Math.max(5 * 1024 * 1024, Number(new URL(request.url).searchParams.get("multipart")));
        const upload = await env.MEDIA.createMultipartUpload(key, { httpMetadata: { contentType } });
        const parts: R2UploadedPart[] = [];
        for (let at = 0, n = 1; at < bytes.byteLength; at += partBytes, n++) {
          parts.push(await upload.uploadPart(n, bytes.slice(at, at + partBytes)));
        }
        await upload.complete(parts);
        return new Response(null, { status: 204 });
      }
      case "/object": {
        // A playback file's floor: one R2 read, streamed out with its length and type (the type
        // decides whether the local runtime compresses the answer, so it must match the service's),
        // nothing else; with `d1=1`, a D1 read by primary key before it (the playback routes' one
        // read of the video).
        const url = new URL(request.url);
        if (url.searchParams.has("d1")) await env.DB.prepare("SELECT * FROM records WHERE id = ?").bind("r").first();
        // A `Range` of `bytes=a-b` is read as that range alone (R2 reads it; nothing is checked).
        const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.get("range") ?? "");
        const offset = Number(range?.[1]);
        const length = Number(range?.[2]) - offset + 1;
        const object = await env.MEDIA.get(
          url.searchParams.get("key") ?? "",
          range ? { range: { offset, length } } : {},
        );
        if (!object) return new Response(null, { status: 404 });
        const headers = new Headers({ "content-length": String(range ? length : object.size) });
        object.writeHttpMetadata(headers);
        if (!range) return new Response(object.body, { headers });
        headers.set("content-range", `bytes ${offset}-${offset + length - 1}/${object.size}`);
        return new Response(object.body, { status: 206, headers });
      }
      case "/writes": {
        // D1 write statements per second as this runtime serves them: `n` single-row inserts one
        // after another (each its own round trip, as requests make them), or in one batch.
        const url = new URL(request.url);
        const n = Number(url.searchParams.get("n") ?? 1000);
        await env.DB.prepare("CREATE TABLE IF NOT EXISTS writes (id TEXT PRIMARY KEY, at INTEGER)").run();
        const insert = env.DB.prepare("INSERT INTO writes VALUES (?, ?)");
        const started = performance.now();
        if (url.searchParams.get("mode") === "batch") {
          await env.DB.batch(Array.from({ length: n }, () => insert.bind(crypto.randomUUID(), Date.now())));
        } else {
          for (let i = 0; i < n; i++) await insert.bind(crypto.randomUUID(), Date.now()).run();
        }
        return Response.json({ n, ms: performance.now() - started });
      }
      default:
        return new Response(null, { status: 404 });
    }
  },
};

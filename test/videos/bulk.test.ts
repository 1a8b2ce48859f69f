import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { publishNow } from "../../src/subscribers";
import { tusUploads } from "../../src/uploads/tus/objects";
import { deleteVideos } from "../../src/videos/delete";
import { type DeletionMessage, finishDeletion } from "../../src/videos/deletion-queue";
import { api, bearer, errorCode, json, newKey, newVideos, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";

type Result = { id: string; ok: boolean; error?: { code: string; message: string } };

async function bulk(key: string, body: unknown): Promise<Result[]> {
  const response = await api("/v1/videos/bulk", bearer(key, json("POST", body)));
  expect(response.status).toBe(200);
  return ((await response.json()) as { results: Result[] }).results;
}

async function eventCount(videoId: string): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT count(*) AS n FROM outbox_events WHERE subject_id = ? AND type = 'video.deleted'",
  )
    .bind(videoId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

async function isDeleted(videoId: string): Promise<boolean> {
  const row = await env.DB.prepare("SELECT deleted_at FROM videos WHERE id = ?")
    .bind(videoId)
    .first<{ deleted_at: string | null }>();
  return row?.deleted_at !== null;
}

async function holdCompletion(videoId: string): Promise<void> {
  await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
    .bind(new Date(Date.now() + 60_000).toISOString(), videoId)
    .run();
}

const codes = (results: Result[]) => results.map((result) => (result.ok ? "ok" : result.error?.code));

describe("bulk set_visibility", () => {
  it("applies the visibility to every id of the project and reports the rest video_not_found", async () => {
    const { key } = await newWorkspace();
    const other = await newWorkspace();
    const [a, b, gone] = await newVideos(key, 3);
    const [foreign] = await newVideos(other.key, 1);
    await api(`/v1/videos/${gone}`, bearer(key, { method: "DELETE" }));
    const unknown = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const results = await bulk(key, {
      action: "set_visibility",
      videoIds: [a, foreign, b, gone, unknown],
      visibility: "private",
    });
    expect(results.map((result) => result.id)).toEqual([a, foreign, b, gone, unknown]);
    expect(codes(results)).toEqual(["ok", "video_not_found", "ok", "video_not_found", "video_not_found"]);
    expect(results[1]?.error?.message).toEqual(expect.any(String));
    for (const id of [a, b]) {
      const video = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { visibility: string };
      expect(video.visibility).toBe("private");
    }
    const theirs = (await (await api(`/v1/videos/${foreign}`, bearer(other.key))).json()) as { visibility: string };
    expect(theirs.visibility).toBe("public");
  });

  it("applies to a video whose upload completion is in flight", async () => {
    const { key } = await newWorkspace();
    const [id = ""] = await newVideos(key, 1);
    await holdCompletion(id);
    expect(codes(await bulk(key, { action: "set_visibility", videoIds: [id], visibility: "unlisted" }))).toEqual([
      "ok",
    ]);
  });
});

describe("bulk delete", () => {
  it("collapses duplicate ids case-insensitively, in order of first appearance", async () => {
    const { key } = await newWorkspace();
    const [a = "", b = ""] = await newVideos(key, 2);
    const results = await bulk(key, { action: "delete", videoIds: [b.toLowerCase(), a, b, a.toLowerCase()] });
    expect(results).toEqual([
      { id: b, ok: true },
      { id: a, ok: true },
    ]);
    expect(await eventCount(a)).toBe(1);
    expect(await eventCount(b)).toBe(1);
  });

  it("follows the state table: deleted and in-flight videos stay as they are", async () => {
    const { key } = await newWorkspace();
    const [live = "", deleted = "", completing = ""] = await newVideos(key, 3);
    await api(`/v1/videos/${deleted}`, bearer(key, { method: "DELETE" }));
    await holdCompletion(completing);
    const results = await bulk(key, { action: "delete", videoIds: [live, deleted, completing] });
    expect(codes(results)).toEqual(["ok", "video_not_found", "upload_completion_in_progress"]);
    expect(await isDeleted(live)).toBe(true);
    expect(await isDeleted(completing)).toBe(false);
    expect(await eventCount(completing)).toBe(0);
    expect(await eventCount(deleted)).toBe(1);
  });

  it("does what DELETE /v1/videos/{id} does, upload abort included", async () => {
    const { key } = await newWorkspace();
    const [id = ""] = await newVideos(key, 1);
    const row = await env.DB.prepare("SELECT source_key, upload_r2_id FROM videos WHERE id = ?")
      .bind(id)
      .first<{ source_key: string; upload_r2_id: string }>();
    const response = await apiWith(
      {},
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "delete", videoIds: [id] })),
    );
    expect(codes(((await response.json()) as { results: Result[] }).results)).toEqual(["ok"]);
    expect((await api(`/v1/videos/${id}`, bearer(key))).status).toBe(404);
    const upload = env.MEDIA.resumeMultipartUpload(String(row?.source_key), String(row?.upload_r2_id));
    await expect(upload.uploadPart(1, new Uint8Array([1]))).rejects.toThrow();
  });

  it("deletes each video once when two bulk deletes of overlapping ids race", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 6);
    const [first, second] = await Promise.all([
      bulk(key, { action: "delete", videoIds: ids.slice(0, 4) }),
      bulk(key, { action: "delete", videoIds: ids.slice(2) }),
    ]);
    for (const id of ids) {
      const oks = [...(first ?? []), ...(second ?? [])].filter((result) => result.id === id && result.ok);
      expect(oks).toHaveLength(1);
      expect(await eventCount(id)).toBe(1);
      expect(await isDeleted(id)).toBe(true);
    }
    const losers = [...(first ?? []), ...(second ?? [])].filter((result) => !result.ok);
    expect(losers.every((result) => result.error?.code === "video_not_found")).toBe(true);
  });

  it("works under cookie auth with projectId", async () => {
    const { session, project, key } = await newWorkspace();
    const [id = ""] = await newVideos(key, 1);
    const response = await api(
      `/v1/videos/bulk?projectId=${project.id}`,
      withCookie(session, json("POST", { action: "delete", videoIds: [id] })),
    );
    expect(response.status).toBe(200);
    expect(await isDeleted(id)).toBe(true);
  });
});

describe("an infrastructure failure on a delete", () => {
  it("stops at the failing id, reports the rest not_attempted, and a retry completes the rest", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 5);
    const unknown = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const request = json("POST", { action: "delete", videoIds: [...ids, unknown] });
    const failing = ids[2];
    const db = new InstrumentedD1(
      env.DB,
      (sql, params) =>
        sql.includes("SET deleted_at") && params.some((param) => String(param).includes(String(failing))),
    );

    const response = await apiWith({ DB: db.binding }, "/v1/videos/bulk", bearer(key, request));
    expect(response.status).toBe(200);
    const results = ((await response.json()) as { results: Result[] }).results;
    expect(codes(results)).toEqual(["ok", "ok", "internal_error", "not_attempted", "not_attempted", "not_attempted"]);
    expect(results.map((result) => result.id)).toEqual([...ids, unknown]);
    expect(await Promise.all(ids.map(isDeleted))).toEqual([true, true, false, false, false]);
    expect(await Promise.all(ids.map(eventCount))).toEqual([1, 1, 0, 0, 0]);

    // The same request again, the fault gone: it re-runs what stopped and changes nothing done.
    const retry = await bulk(key, { action: "delete", videoIds: [...ids, unknown] });
    expect(codes(retry)).toEqual(["video_not_found", "video_not_found", "ok", "ok", "ok", "video_not_found"]);
    expect(await Promise.all(ids.map(isDeleted))).toEqual([true, true, true, true, true]);
    expect(await Promise.all(ids.map(eventCount))).toEqual([1, 1, 1, 1, 1]);
  });

  it("on the first id stops everything", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 3);
    // Every delete statement fails: the first id is where processing stops.
    const db = new InstrumentedD1(env.DB, (sql) => sql.includes("SET deleted_at"));
    const response = await apiWith(
      { DB: db.binding },
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "delete", videoIds: ids })),
    );
    const results = ((await response.json()) as { results: Result[] }).results;
    expect(codes(results)).toEqual(["internal_error", "not_attempted", "not_attempted"]);
    expect(await Promise.all(ids.map(isDeleted))).toEqual([false, false, false]);
  });

  it("on set_visibility stops at the first id, changing nothing", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 3);
    const db = new InstrumentedD1(env.DB, (sql) => sql.includes("SET visibility"));
    const body = { action: "set_visibility", videoIds: ids, visibility: "private" };
    const response = await apiWith({ DB: db.binding }, "/v1/videos/bulk", bearer(key, json("POST", body)));
    const results = ((await response.json()) as { results: Result[] }).results;
    expect(codes(results)).toEqual(["internal_error", "not_attempted", "not_attempted"]);
    for (const id of ids) {
      const video = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as { visibility: string };
      expect(video.visibility).toBe("public");
    }
    expect(codes(await bulk(key, body))).toEqual(["ok", "ok", "ok"]);
  });

  it("answers 500 internal_error on DELETE /v1/videos/{id}, changing nothing", async () => {
    const { key } = await newWorkspace();
    const [id = ""] = await newVideos(key, 1);
    const db = new InstrumentedD1(env.DB, (sql) => sql.includes("INSERT OR IGNORE INTO outbox_events"));
    const response = await apiWith({ DB: db.binding }, `/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("internal_error");
    expect(body.error.message).not.toMatch(/injected|SQL|INSERT/i);
    expect(await isDeleted(id)).toBe(false);
    expect(await eventCount(id)).toBe(0);
  });
});

describe("round trips", () => {
  it("deleteVideos answers 100 ids in 1 D1 round trip and one queue send; its follow-up takes a few", async () => {
    const { key, project } = await newWorkspace();
    const ids = await newVideos(key, 100);
    const db = new InstrumentedD1(env.DB);
    const sent: DeletionMessage[] = [];
    const deletions = { send: async (body: DeletionMessage) => void sent.push(body) } as unknown as Queue;
    const outcomes = await deleteVideos({ db: db.binding, deletions }, { projectId: project.id, mode: "live" }, ids);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(db.roundTrips).toBe(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.videoIds.sort()).toEqual([...ids].sort());
    db.reset();
    await finishDeletion(
      {
        db: db.binding,
        media: env.MEDIA,
        uploads: tusUploads(env.TUS_UPLOADS),
        publish: publishNow({ ...env, DB: db.binding }),
        cancelEncoding: async () => {},
        stopImport: async () => {},
      },
      sent[0] as DeletionMessage,
    );
    // Publishing the events (no endpoints here), reading the leftovers, recording the R2 clean-up.
    expect(db.roundTrips).toBeLessThanOrEqual(5);
    expect(await eventCount(ids[99] ?? "")).toBe(1);
  });

  it("a bulk request costs the same round trips for 1 id as for 100", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 101);
    const [single = "", ...hundred] = ids;
    const trips = async (body: unknown) => {
      const db = new InstrumentedD1(env.DB);
      const response = await apiWith({ DB: db.binding }, "/v1/videos/bulk", bearer(key, json("POST", body)));
      expect(response.status).toBe(200);
      return db.roundTrips;
    };
    const oneVisibility = await trips({ action: "set_visibility", videoIds: [single], visibility: "private" });
    expect(await trips({ action: "set_visibility", videoIds: hundred, visibility: "private" })).toBe(oneVisibility);
    const oneDelete = await trips({ action: "delete", videoIds: [single] });
    expect(await trips({ action: "delete", videoIds: hundred })).toBe(oneDelete);
  });
});

describe("bulk request validation", () => {
  const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
  it.each([
    ["a missing action", { videoIds: [id] }],
    ["an unknown action", { action: "archive", videoIds: [id] }],
    ["no ids", { action: "delete", videoIds: [] }],
    ["101 ids", { action: "delete", videoIds: Array.from({ length: 101 }, () => id) }],
    ["a non-ULID id", { action: "delete", videoIds: [id, "nope"] }],
    ["a number id", { action: "delete", videoIds: [42] }],
    ["ids not in an array", { action: "delete", videoIds: id }],
    ["visibility on a delete", { action: "delete", videoIds: [id], visibility: "public" }],
    ["set_visibility without visibility", { action: "set_visibility", videoIds: [id] }],
    ["an unknown visibility", { action: "set_visibility", videoIds: [id], visibility: "hidden" }],
    ["an unknown field", { action: "delete", videoIds: [id], force: true }],
    ["null", null],
    ["unparseable JSON", "{"],
  ])("refuses %s with invalid_body", async (_, body) => {
    const { key } = await newWorkspace();
    const response = await api("/v1/videos/bulk", bearer(key, json("POST", body === null ? "null" : body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("accepts exactly 100 ids, duplicates counted before they collapse", async () => {
    const { key } = await newWorkspace();
    const results = await bulk(key, { action: "delete", videoIds: Array.from({ length: 100 }, () => id) });
    expect(results).toHaveLength(1);
  });

  it("refuses a non-JSON content type with invalid_body", async () => {
    const { key } = await newWorkspace();
    const response = await api(
      "/v1/videos/bulk",
      bearer(key, { method: "POST", body: "{}", headers: { "content-type": "text/plain" } }),
    );
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("needs a write key", async () => {
    const { session, project } = await newWorkspace();
    const reader = await newKey(session, project.id, ["read"]);
    const response = await api("/v1/videos/bulk", bearer(reader, json("POST", { action: "delete", videoIds: [id] })));
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("insufficient_scope");
  });
});

describe("bulk rate limit", () => {
  it("lets exactly 30 of 40 simultaneous calls by one key through", async () => {
    const { key } = await newWorkspace();
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        api(
          "/v1/videos/bulk",
          bearer(key, json("POST", { action: "delete", videoIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"] })),
        ),
      ),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(30);
    const limited = responses.filter((response) => response.status === 429);
    expect(limited).toHaveLength(10);
    expect(limited[0]?.headers.get("ratelimit-policy")).toBe('"bulk";q=30;w=60');
  });
});

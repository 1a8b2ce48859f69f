import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { customThumbnailKey, legacyThumbnailKey, posterKey, projectPrefixes } from "../../src/lib/storage-keys";
import { isoTime } from "../../src/lib/time";
import { ulid } from "../../src/lib/ulid";
import { continuePurge, type ProjectDeletionMessage } from "../../src/projects/deletions";
import { PURGE_LIMITS, type PurgeLimits, purgeProject } from "../../src/projects/purge";
import { PURGED_TABLE_ORDER } from "../../src/projects/queries";
import { tusUploads } from "../../src/uploads/tus/objects";
import { IMAGES } from "../fixtures/images";
import {
  ADMIN,
  api,
  bearer,
  errorCode,
  json,
  logIn,
  newKey,
  newProject,
  newSession,
  newVideo,
  type Session,
  withCookie,
} from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";
import { runQueue, runScheduled } from "../support/handlers";
import { attemptsOf, consume } from "../webhooks/support";

afterEach(() => {
  vi.restoreAllMocks();
});

const png = { "content-type": "image/png" };

/**
 * A project holding one of everything: a key, a video with an open upload, a part uploaded, a
 * custom thumbnail, a caption track, chapters and an audio track, a deleted video (its event and a pending attempt to the project's endpoint),
 * a watermark image and an automatic poster frame.
 */
async function fullProject(session: Session) {
  const project = await newProject(session);
  const key = await newKey(session, project.id);
  const { video } = await newVideo(key, { title: "kept" });
  const part = await api(
    `/v1/videos/${video.id}/upload/parts/1`,
    bearer(key, { method: "PUT", body: "part bytes", headers: { "content-length": "10" } }),
  );
  expect(part.status).toBe(200);
  const thumbnail = await api(
    `/v1/videos/${video.id}/thumbnail`,
    bearer(key, { method: "PUT", headers: png, body: IMAGES.rgbPng }),
  );
  const { thumbnailUrl } = (await thumbnail.json()) as { thumbnailUrl: string };
  const watermark = await api(
    `/v1/projects/${project.id}/encoding-settings/watermark-image`,
    withCookie(session, { method: "PUT", headers: png, body: IMAGES.rgbPng }),
  );
  expect(watermark.status).toBe(200);
  const captions = await api(
    `/v1/videos/${video.id}/captions/en`,
    bearer(key, { method: "PUT", headers: { "content-type": "text/vtt" }, body: "WEBVTT\n" }),
  );
  expect(captions.status).toBe(200);
  const chapters = await api(
    `/v1/videos/${video.id}/chapters`,
    bearer(key, json("PUT", { chapters: [{ start: 0, title: "Start" }] })),
  );
  expect(chapters.status).toBe(200);
  // An added audio track's row (its objects live under the video's prefix, as the captions' do).
  await env.DB.prepare(
    `INSERT INTO audio_tracks (project_id, video_id, language, label, generation, source_key, status,
       created_at, updated_at) VALUES (?1, ?2, 'fr', 'French', ?3, ?4, 'ready', ?5, ?5)`,
  )
    .bind(project.id, video.id, ulid(), `videos/${project.id}/${video.id}/audio/x/source`, isoTime(Date.now()))
    .run();
  await env.MEDIA.put(posterKey(project.id, video.id), "poster");
  await env.MEDIA.put(legacyThumbnailKey(project.id, video.id, "old.png"), "legacy");
  const created = await api(
    `/v1/projects/${project.id}/webhook-endpoints`,
    bearer(key, json("POST", { url: "https://hooks.example.com/in" })),
  );
  const endpoint = (await created.json()) as { id: string };
  const gone = (await newVideo(key)).video.id;
  expect((await api(`/v1/videos/${gone}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
  const upload = await env.DB.prepare("SELECT source_key, upload_r2_id FROM videos WHERE id = ?")
    .bind(video.id)
    .first<{ source_key: string; upload_r2_id: string }>();
  return {
    project,
    key,
    video: video.id,
    thumbnailPath: new URL(thumbnailUrl).pathname,
    endpoint: endpoint.id,
    upload: upload as NonNullable<typeof upload>,
  };
}

/** A logged-in owner with the project to delete and another project beside it. */
async function setUp() {
  const session = await newSession();
  const doomed = await fullProject(session);
  const sibling = await fullProject(session);
  return { session, doomed, sibling };
}

function deleteProject(session: Session, projectId: string, headers: Record<string, string> = {}) {
  return api(`/v1/projects/${projectId}`, withCookie(session, { method: "DELETE", headers }));
}

/** The project's purge messages the requests and runs have sent so far. */
function sentPurges(): ProjectDeletionMessage[] {
  return vi.mocked(env.PROJECT_DELETION_QUEUE.send).mock.calls.map(([body]) => body as ProjectDeletionMessage);
}

/** Every row anywhere that belongs to the project, by table. */
async function rowsOf(projectId: string): Promise<Record<string, number>> {
  const counts = await env.DB.prepare(
    `SELECT
       (SELECT count(*) FROM projects WHERE id = ?1) AS projects,
       (SELECT count(*) FROM api_keys WHERE project_id = ?1) AS api_keys,
       (SELECT count(*) FROM videos WHERE project_id = ?1) AS videos,
       (SELECT count(*) FROM encoding_settings WHERE project_id = ?1) AS encoding_settings,
       (SELECT count(*) FROM webhook_endpoints WHERE project_id = ?1) AS webhook_endpoints,
       (SELECT count(*) FROM outbox_events WHERE project_id = ?1) AS outbox_events,
       (SELECT count(*) FROM upload_parts WHERE project_id = ?1) AS upload_parts,
       (SELECT count(*) FROM captions WHERE project_id = ?1) AS captions,
       (SELECT count(*) FROM chapters WHERE project_id = ?1) AS chapters,
       (SELECT count(*) FROM audio_tracks WHERE project_id = ?1) AS audio_tracks,
       (SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE e.project_id = ?1) AS webhook_deliveries`,
  )
    .bind(projectId)
    .first<Record<string, number>>();
  return counts ?? {};
}

/** Every R2 key under the project's prefixes. */
async function objectsOf(projectId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of projectPrefixes(projectId)) {
    keys.push(...(await env.MEDIA.list({ prefix })).objects.map((object) => object.key));
  }
  return keys.sort();
}

/** Rows and objects of a project, to show it untouched. */
async function snapshot(projectId: string) {
  const tables = [
    "projects",
    "api_keys",
    "videos",
    "encoding_settings",
    "webhook_endpoints",
    "outbox_events",
    "captions",
    "chapters",
  ];
  const rows = await env.DB.batch(
    tables.map((table) =>
      env.DB.prepare(`SELECT * FROM ${table} WHERE ${table === "projects" ? "id" : "project_id"} = ? ORDER BY 1`).bind(
        projectId,
      ),
    ),
  );
  return { rows: rows.map((result) => result.results), objects: await objectsOf(projectId) };
}

function expectNothingLeft(rows: Record<string, number>) {
  expect(rows).toEqual({
    projects: 0,
    api_keys: 0,
    videos: 0,
    encoding_settings: 0,
    webhook_endpoints: 0,
    outbox_events: 0,
    upload_parts: 0,
    captions: 0,
    chapters: 0,
    audio_tracks: 0,
    webhook_deliveries: 0,
  });
}

describe("DELETE /v1/projects/{projectId}: at once", () => {
  it("answers 204, after which the project, its keys, videos, uploads and thumbnails are gone", async () => {
    const { session, doomed, sibling } = await setUp();
    const before = await snapshot(sibling.project.id);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM outbox_events").first<number>("n");

    const response = await deleteProject(session, doomed.project.id.toLowerCase());
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(sentPurges()).toEqual([{ projectId: doomed.project.id }]);

    const expectGone = async (response: Response, status: number, code: string) => {
      expect(response.status, response.url).toBe(status);
      expect(await errorCode(response)).toBe(code);
    };
    const id = doomed.project.id;
    await expectGone(await api(`/v1/projects/${id}`, withCookie(session)), 404, "not_found");
    const listed = (await (await api("/v1/projects", withCookie(session))).json()) as { data: { id: string }[] };
    expect(listed.data.map((project) => project.id)).toEqual([sibling.project.id]);
    // Its key is no credential any more, for anything.
    await expectGone(await api("/v1/videos", bearer(doomed.key)), 401, "unauthorized");
    await expectGone(await api(`/v1/videos/${doomed.video}`, bearer(doomed.key)), 401, "unauthorized");
    await expectGone(await api(`/v1/projects/${id}/webhook-endpoints`, bearer(doomed.key)), 401, "unauthorized");
    // Under the cookie it is as a foreign project: its videos, uploads and project paths are 404.
    await expectGone(await api(`/v1/videos/${doomed.video}?projectId=${id}`, withCookie(session)), 404, "not_found");
    await expectGone(await api(`/v1/videos?projectId=${id}`, withCookie(session)), 404, "not_found");
    await expectGone(
      await api(
        `/v1/videos/${doomed.video}/upload/parts/2?projectId=${id}`,
        withCookie(session, { method: "PUT", body: "more", headers: { "content-length": "4" } }),
      ),
      404,
      "not_found",
    );
    await expectGone(
      await api(
        `/v1/videos/${doomed.video}/upload/complete?projectId=${id}`,
        withCookie(session, json("POST", { parts: [{ partNumber: 1, etag: "x" }] })),
      ),
      404,
      "not_found",
    );
    await expectGone(await api(`/v1/projects/${id}/api-keys`, withCookie(session)), 404, "not_found");
    await expectGone(await api(`/v1/projects/${id}/encoding-settings`, withCookie(session)), 404, "not_found");
    await expectGone(await api(`/v1/projects/${id}/webhook-endpoints`, withCookie(session)), 404, "not_found");
    await expectGone(
      await api(`/v1/projects/${id}/webhook-endpoints/${doomed.endpoint}`, withCookie(session)),
      404,
      "endpoint_not_found",
    );
    // Its public thumbnail URLs answer 404 although the purge has not removed the objects yet.
    const file = doomed.thumbnailPath.split("/").at(-1) ?? "";
    expect(await env.MEDIA.head(customThumbnailKey(id, doomed.video, file))).not.toBeNull();
    await expectGone(await api(doomed.thumbnailPath), 404, "not_found");
    await expectGone(await api(`/thumbnails/${id}/${doomed.video}/poster.jpg`), 404, "not_found");
    // Deleting it again: it is not there.
    await expectGone(await deleteProject(session, id), 404, "not_found");

    // No video.deleted event was written for its videos, and nothing was removed yet.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM outbox_events").first<number>("n")).toBe(events);
    expect((await rowsOf(id)).videos).toBe(2);

    // The other project of the account is untouched and works.
    expect(await snapshot(sibling.project.id)).toEqual(before);
    expect((await api(`/v1/projects/${sibling.project.id}`, withCookie(session))).status).toBe(200);
    expect((await api(`/v1/videos/${sibling.video}`, bearer(sibling.key))).status).toBe(200);
    expect((await api(sibling.thumbnailPath)).status).toBe(200);
  });

  it("sends no further delivery to its webhook endpoints", async () => {
    const { session, doomed, sibling } = await setUp();
    // A pending attempt (the deleted video's), and an event not yet published.
    const [pending] = await attemptsOf(doomed.endpoint);
    expect(pending?.state).toBe("pending");
    const sent: Request[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      sent.push(new Request(input, init));
      return new Response("", { status: 200 });
    });
    const { video } = await newVideo(doomed.key);
    await apiWith(
      { DELETION_QUEUE: { send: async () => {} } as unknown as Queue },
      `/v1/videos/${video.id}`,
      bearer(doomed.key, { method: "DELETE" }),
    );

    expect((await deleteProject(session, doomed.project.id)).status).toBe(204);
    await consume([{ deliveryId: pending?.id }]);
    expect(sent).toHaveLength(0);
    expect((await attemptsOf(doomed.endpoint))[0]).toMatchObject({
      id: pending?.id,
      state: "failed",
      error: "endpoint_disabled",
      next_retry_at: null,
    });
    // The publisher (the sweep, here) writes no attempt for the deleted project's event.
    await env.DB.prepare("UPDATE outbox_events SET created_at = ? WHERE subject_id = ?")
      .bind(isoTime(Date.now() - 5 * 60_000), video.id)
      .run();
    await runScheduled();
    expect(await attemptsOf(doomed.endpoint)).toHaveLength(1);

    // The sibling project's endpoint still gets its deliveries.
    const [other] = await attemptsOf(sibling.endpoint);
    await consume([{ deliveryId: other?.id }]);
    expect(sent.map((request) => request.url)).toEqual(["https://hooks.example.com/in"]);
  });

  it("answers not_found for an unknown, foreign or malformed id", async () => {
    const session = await newSession();
    const stranger = await newSession();
    const foreign = await newProject(stranger);
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", foreign.id, "nope", "x".repeat(300), "01ARZ3NDEKTSV4RRFFQ69G5FA"]) {
      const response = await deleteProject(session, encodeURIComponent(id));
      expect(response.status, id).toBe(404);
      expect(await errorCode(response)).toBe("not_found");
    }
    expect((await api(`/v1/projects/${foreign.id}`, withCookie(stranger))).status).toBe(200);
    expect(sentPurges()).toEqual([]);
  });

  it("takes the session cookie only: an API key is refused, and so are unapproved accounts and foreign origins", async () => {
    const session = await newSession();
    const project = await newProject(session);
    const key = await newKey(session, project.id);
    const byKey = await api(`/v1/projects/${project.id}`, bearer(key, { method: "DELETE" }));
    expect(byKey.status).toBe(401);
    expect(await errorCode(byKey)).toBe("unauthorized");

    const evil = await deleteProject(session, project.id, { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(await errorCode(evil)).toBe("forbidden_origin");

    await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
    const cookie = await logIn(session.email, session.password);
    const suspended = await deleteProject({ ...session, cookie }, project.id);
    expect(suspended.status).toBe(403);
    expect(await errorCode(suspended)).toBe("account_not_approved");

    expect(
      await env.DB.prepare("SELECT deleted_at FROM projects WHERE id = ?").bind(project.id).first("deleted_at"),
    ).toBeNull();
    expect(sentPurges()).toEqual([]);
  });

  it("still deletes when the purge message cannot be sent; the scheduled sweep purges it", async () => {
    const { session, doomed, sibling } = await setUp();
    const before = await snapshot(sibling.project.id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = { send: () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;
    const response = await apiWith(
      { PROJECT_DELETION_QUEUE: failing },
      `/v1/projects/${doomed.project.id}`,
      withCookie(session, { method: "DELETE" }),
    );
    expect(response.status).toBe(204);
    expect((await api(`/v1/projects/${doomed.project.id}`, withCookie(session))).status).toBe(404);

    // The sweep leaves a deletion younger than a minute to its queue message…
    await runScheduled();
    expect((await rowsOf(doomed.project.id)).projects).toBe(1);
    // …and takes it on after that.
    await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE id = ?")
      .bind(isoTime(Date.now() - 2 * 60_000), doomed.project.id)
      .run();
    await runScheduled();
    expectNothingLeft(await rowsOf(doomed.project.id));
    expect(await objectsOf(doomed.project.id)).toEqual([]);
    expect(await snapshot(sibling.project.id)).toEqual(before);
  });
});

describe("the project's purge, in the background", () => {
  it("removes every row and R2 object of the project, and aborts its open uploads", async () => {
    const { session, doomed, sibling } = await setUp();
    const before = await snapshot(sibling.project.id);
    // Custom thumbnail, poster, a thumbnail at the legacy key, watermark, caption track.
    expect(await objectsOf(doomed.project.id)).toHaveLength(5);
    expect(await deleteProject(session, doomed.project.id)).toHaveProperty("status", 204);

    const result = await runQueue("project-deletions", sentPurges());
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(result.retryMessages).toEqual([]);
    expectNothingLeft(await rowsOf(doomed.project.id));
    expect(await objectsOf(doomed.project.id)).toEqual([]);
    // The multipart upload was aborted: it takes no more parts.
    const upload = env.MEDIA.resumeMultipartUpload(doomed.upload.source_key, doomed.upload.upload_r2_id);
    await expect(upload.uploadPart(2, "x")).rejects.toThrow();
    // Finished: no further message.
    expect(sentPurges()).toHaveLength(1);
    // A repeated message finds nothing to do.
    expect((await runQueue("project-deletions", sentPurges())).explicitAcks).toEqual(["m0"]);

    expect(await snapshot(sibling.project.id)).toEqual(before);
    expect((await api(`/v1/videos/${sibling.video}`, bearer(sibling.key))).status).toBe(200);
    expect((await api(sibling.thumbnailPath)).status).toBe(200);
  });

  it("is retried by the queue when R2 fails, and finishes on the retry", async () => {
    const { session, doomed } = await setUp();
    await deleteProject(session, doomed.project.id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = new Proxy(env.MEDIA, {
      get(target, property) {
        if (property === "delete") return () => Promise.reject(new Error("R2 unavailable"));
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const failed = await runQueue("project-deletions", sentPurges(), { MEDIA: failing });
    expect(failed.retryMessages.map((message) => message.msgId)).toEqual(["m0"]);
    expect((await rowsOf(doomed.project.id)).projects).toBe(1);
    expect((await runQueue("project-deletions", sentPurges().slice(0, 1))).explicitAcks).toEqual(["m0"]);
    expectNothingLeft(await rowsOf(doomed.project.id));
    expect(await objectsOf(doomed.project.id)).toEqual([]);
  });

  it("never purges a live project, and acknowledges malformed messages", async () => {
    const session = await newSession();
    const live = await fullProject(session);
    const before = await snapshot(live.project.id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const result = await runQueue("project-deletions", [
      { projectId: live.project.id },
      { projectId: "nope" },
      { projectId: live.project.id, extra: 1 },
      {},
    ]);
    expect(result.explicitAcks.sort()).toEqual(["m0", "m1", "m2", "m3"]);
    expect(await snapshot(live.project.id)).toEqual(before);
    expect((await api(live.thumbnailPath)).status).toBe(200);
  });
});

describe("the purge's bounds", () => {
  /** Videos, deleted already and without uploads, written straight to D1: many, fast. */
  async function manyVideos(projectId: string, count: number): Promise<void> {
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO videos (id, project_id, status, visibility, source_key, created_at, updated_at, deleted_at)
       SELECT printf('01BULK%020d', i), ?1, 'waiting_for_upload', 'public',
              'videos/' || ?1 || '/' || printf('01BULK%020d', i) || '/source', ?3, ?3, ?3
       FROM n`,
    )
      .bind(projectId, count, isoTime(Date.now()))
      .run();
  }

  it("with the default limits, a project larger than one run is finished by the next message", async () => {
    const session = await newSession();
    const project = await newProject(session);
    const total = PURGE_LIMITS.rows * PURGE_LIMITS.steps + 50;
    await manyVideos(project.id, total);
    expect((await deleteProject(session, project.id)).status).toBe(204);

    const first = await runQueue("project-deletions", sentPurges());
    expect(first.explicitAcks).toEqual(["m0"]);
    const left = (await rowsOf(project.id)).videos;
    // At most 500 rows a statement and 20 steps a run; one run leaves some, and sends the message again.
    expect(left).toBeGreaterThan(0);
    expect(left).toBeGreaterThanOrEqual(total - PURGE_LIMITS.rows * PURGE_LIMITS.steps);
    expect((await rowsOf(project.id)).projects).toBe(1);
    expect(sentPurges()).toEqual([{ projectId: project.id }, { projectId: project.id }]);

    // Each later message goes on where the last run stopped, until the project is gone.
    for (let handled = 1; handled < sentPurges().length && handled < 5; handled++) {
      const next = await runQueue("project-deletions", [sentPurges()[handled]]);
      expect(next.explicitAcks).toEqual(["m0"]);
    }
    expectNothingLeft(await rowsOf(project.id));
    // A few messages, not one per step. Each run also spends a step on every other stage (one per
    // prefix and per table), so the runs this takes grow with the tables: with 18 stages, four.
    expect(sentPurges().length).toBeLessThanOrEqual(4);
  });

  it("holds every step to its limit, and goes on where the last run stopped", async () => {
    const session = await newSession();
    const doomed = await fullProject(session);
    const key = doomed.key;
    for (let i = 0; i < 3; i++) {
      const { video } = await newVideo(key);
      await api(`/v1/videos/${video.id}/thumbnail`, bearer(key, { method: "PUT", headers: png, body: IMAGES.rgbPng }));
    }
    await manyVideos(doomed.project.id, 7);
    expect((await deleteProject(session, doomed.project.id)).status).toBe(204);

    // One step per stage (the encodings, the uploads, each prefix, each table) and one for the
    // project row is the least a run may take.
    const stages = 2 + projectPrefixes(doomed.project.id).length + PURGED_TABLE_ORDER.length;
    const limits: PurgeLimits = { rows: 2, keys: 2, uploads: 1, steps: stages + 1 };
    const deps = { db: env.DB, media: env.MEDIA, uploads: tusUploads(env.TUS_UPLOADS), cancelEncoding: async () => {} };
    // Every list and delete of R2 stays within `keys`.
    const list = vi.spyOn(env.MEDIA, "list");
    const remove = vi.spyOn(env.MEDIA, "delete");
    const runs: number[] = [];
    for (let run = 0; run < 50; run++) {
      const result = await purgeProject(deps, doomed.project.id, limits);
      expect(result.steps).toBeLessThanOrEqual(limits.steps);
      runs.push(result.removed);
      if (result.done) break;
      // Nothing is half gone where it matters: the project row stays until the very end.
      expect((await rowsOf(doomed.project.id)).projects).toBe(1);
    }
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const removed of runs) expect(removed).toBeLessThanOrEqual(limits.steps * 2 + 1);
    for (const [options] of list.mock.calls) expect(options?.limit).toBe(2);
    for (const [keys] of remove.mock.calls) expect((keys as string[]).length).toBeLessThanOrEqual(2);
    expectNothingLeft(await rowsOf(doomed.project.id));
    expect(await objectsOf(doomed.project.id)).toEqual([]);
  });

  it("does not loop through the queue when a run makes no progress", async () => {
    const session = await newSession();
    const project = await newProject(session);
    expect((await deleteProject(session, project.id)).status).toBe(204);
    // As an earlier run would have left it: nothing but the project row.
    await env.DB.prepare("DELETE FROM encoding_settings WHERE project_id = ?").bind(project.id).run();
    // A row written just before the last step (by a request still in flight, say) keeps the project
    // row; the run removed nothing, so it is left to the sweep rather than sent again.
    const db = new InstrumentedD1(env.DB);
    db.before = async (sql) => {
      if (!sql.startsWith("DELETE FROM projects")) return;
      db.before = undefined;
      await env.DB.prepare(
        `INSERT INTO api_keys (id, project_id, name, scopes, mode, key_hash, created_at)
         VALUES ('01LATEKEY00000000000000000', ?1, 'late', 'read', 'test', 'late-hash', ?2)`,
      )
        .bind(project.id, isoTime(Date.now()))
        .run();
    };
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const deps = {
      db: db.binding,
      media: env.MEDIA,
      uploads: tusUploads(env.TUS_UPLOADS),
      queue: env.PROJECT_DELETION_QUEUE,
      cancelEncoding: async () => {},
    };
    await continuePurge(deps, { projectId: project.id });
    expect((await rowsOf(project.id)).projects).toBe(1);
    expect(sentPurges()).toHaveLength(1);
    expect(logged.mock.calls.flat().join(" ")).toContain("no progress");
    // The next run (the sweep's) finishes it.
    expect(await purgeProject(deps, project.id)).toMatchObject({ done: true });
    expectNothingLeft(await rowsOf(project.id));
  });
});

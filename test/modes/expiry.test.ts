import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/lib/time";
import { SCHEDULED_TASKS } from "../../src/scheduled";
import { VideoDeletedEventSchema } from "../../src/videos/events";
import { TEST_VIDEO_LIFETIME_MS } from "../../src/videos/model";
import { expiredTestVideos } from "../../src/videos/queries";
import { sweepExpiredTestVideos } from "../../src/videos/sweeper";
import { api, bearer, errorCode, newKey, newProject, newSession, newVideo } from "../helpers";
import { InstrumentedD1 } from "../support/d1";
import { twoModes } from "./support";

/**
 * Test mode (docs/api-guide.md#test-mode-and-going-live): a test video is deleted 24 hours after
 * its creation as DELETE /v1/videos/{id} deletes it, its video.deleted included, by the scheduled
 * sweep. The clock is injected, never waited for. The sweep reads every project's expired test
 * videos, so each test reads only its own.
 */

const store = () => ({ db: env.DB, deletions: env.DELETION_QUEUE });

async function row(videoId: string) {
  return env.DB.prepare("SELECT deleted_at, upload_id, storage_cleared_at FROM videos WHERE id = ?")
    .bind(videoId)
    .first<{ deleted_at: string | null; upload_id: string | null; storage_cleared_at: string | null }>();
}

async function deletedEvent(videoId: string) {
  return env.DB.prepare("SELECT payload, livemode FROM outbox_events WHERE subject_id = ? AND type = 'video.deleted'")
    .bind(videoId)
    .first<{ payload: string; livemode: number }>();
}

/** Test videos of a new project, created (as far as the sweep can tell) at `createdAt`. */
async function testVideosCreatedAt(createdAt: string, count: number): Promise<string[]> {
  const session = await newSession();
  const key = await newKey(session, (await newProject(session)).id, ["read", "write"], "test");
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await newVideo(key)).video.id);
  // Oldest first, a millisecond apart, before any video another test made.
  for (const [i, id] of ids.entries()) {
    await env.DB.prepare("UPDATE videos SET created_at = ? WHERE id = ?")
      .bind(isoTime(Date.parse(createdAt) + i), id)
      .run();
  }
  return ids;
}

describe("the expiry of test videos", () => {
  it("deletes a test video 24 hours after its creation, as DELETE does, with its video.deleted to test endpoints", async () => {
    const ws = await twoModes();
    const video = (await (await api(`/v1/videos/${ws.objects.test.video}`, bearer(ws.keys.test))).json()) as {
      createdAt: string;
    };
    const expiresAt = Date.parse(video.createdAt) + TEST_VIDEO_LIFETIME_MS;

    await sweepExpiredTestVideos(store(), expiresAt - 1);
    expect((await api(`/v1/videos/${ws.objects.test.video}`, bearer(ws.keys.test))).status).toBe(200);

    await sweepExpiredTestVideos(store(), expiresAt);
    const gone = await api(`/v1/videos/${ws.objects.test.video}`, bearer(ws.keys.test));
    expect(await errorCode(gone)).toBe("video_not_found");
    // As DELETE leaves it: deleted at that time, its upload session closed, its R2 objects removed.
    expect(await row(ws.objects.test.video)).toMatchObject({
      deleted_at: isoTime(expiresAt),
      upload_id: null,
      storage_cleared_at: expect.any(String),
    });
    const event = await deletedEvent(ws.objects.test.video);
    expect(event?.livemode).toBe(0);
    expect(VideoDeletedEventSchema.parse(JSON.parse(event?.payload ?? "{}"))).toEqual({
      type: "video.deleted",
      timestamp: isoTime(expiresAt),
      data: { id: ws.objects.test.video, projectId: ws.projectId, deletedAt: isoTime(expiresAt) },
    });
    const attempts = await env.DB.prepare(
      "SELECT d.endpoint_id FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.event_id WHERE o.subject_id = ?",
    )
      .bind(ws.objects.test.video)
      .all<{ endpoint_id: string }>();
    expect(attempts.results.map((attempt) => attempt.endpoint_id)).toEqual([ws.objects.test.endpoint]);

    // A direct upload's test video goes the same way (made a moment later): the upload is cancelled.
    await sweepExpiredTestVideos(store(), expiresAt + 60_000);
    const upload = await api(`/v1/uploads/${ws.objects.test.upload}`, bearer(ws.keys.test));
    expect(((await upload.json()) as { status: string }).status).toBe("cancelled");

    // Live videos, made at the same time, stay, however old.
    await sweepExpiredTestVideos(store(), expiresAt + 365 * TEST_VIDEO_LIFETIME_MS);
    for (const id of [ws.objects.live.video, ws.objects.live.uploadVideo]) {
      expect((await api(`/v1/videos/${id}`, bearer(ws.keys.live))).status).toBe(200);
    }
  });

  it("works in bounded batches: what one run leaves, the next deletes", async () => {
    const ids = await testVideosCreatedAt("2001-01-01T00:00:00.000Z", 5);
    const now = Date.parse("2001-01-02T00:00:00.100Z");
    expect(await sweepExpiredTestVideos(store(), now, { batch: 2, batches: 2 })).toBe(4);
    const after = await Promise.all(ids.map(async (id) => (await row(id))?.deleted_at !== null));
    expect(after).toEqual([true, true, true, true, false]);
    expect(await sweepExpiredTestVideos(store(), now, { batch: 2, batches: 2 })).toBe(1);
    expect((await row(ids[4] as string))?.deleted_at).not.toBeNull();
    expect(await sweepExpiredTestVideos(store(), now, { batch: 2, batches: 2 })).toBe(0);
  });

  it("passes over a video whose upload completion is in flight, and deletes it once its lease is over", async () => {
    const [held, next, last] = await testVideosCreatedAt("2002-01-01T00:00:00.000Z", 3);
    const now = Date.parse("2002-01-02T00:00:00.100Z");
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(isoTime(now + 60_000), held)
      .run();
    expect(await sweepExpiredTestVideos(store(), now, { batch: 1, batches: 3 })).toBe(2);
    expect((await row(held as string))?.deleted_at).toBeNull();
    expect((await row(next as string))?.deleted_at).not.toBeNull();
    expect((await row(last as string))?.deleted_at).not.toBeNull();
    expect(await sweepExpiredTestVideos(store(), now + 60_001, { batch: 1, batches: 3 })).toBe(1);
    expect((await row(held as string))?.deleted_at).not.toBeNull();
    expect(await deletedEvent(held as string)).not.toBeNull();
  });

  it("leaves a deleted project's test videos to the project's purge (no video.deleted each)", async () => {
    const session = await newSession();
    const project = await newProject(session);
    const key = await newKey(session, project.id, ["read", "write"], "test");
    const { video } = await newVideo(key);
    await env.DB.prepare("UPDATE videos SET created_at = ? WHERE id = ?")
      .bind("2003-01-01T00:00:00.000Z", video.id)
      .run();
    expect(
      (await api(`/v1/projects/${project.id}`, { method: "DELETE", headers: { cookie: session.cookie } })).status,
    ).toBe(204);
    await sweepExpiredTestVideos(store(), Date.parse("2003-01-03T00:00:00.000Z"));
    expect((await row(video.id))?.deleted_at).toBeNull();
    expect(await deletedEvent(video.id)).toBeNull();
  });

  it("finds the expired test videos with one ordered seek on videos_test_expiry, however deep", async () => {
    const db = new InstrumentedD1(env.DB);
    const ran: { sql: string; params: unknown[] }[] = [];
    db.before = async (sql, params) => void ran.push({ sql, params });
    await expiredTestVideos(db.binding, "2004-01-01T00:00:00.000Z", null, 100);
    await expiredTestVideos(
      db.binding,
      "2004-01-01T00:00:00.000Z",
      { createdAt: "2003-12-01T00:00:00.000Z", id: "0" },
      100,
    );
    for (const { sql, params } of ran) {
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...params)
        .all<{ detail: string }>();
      const plan = results.map((row) => row.detail).join("\n");
      expect(plan).toMatch(
        /^SEARCH v USING (COVERING )?INDEX videos_test_expiry \(\(created_at,id\)>\(\?,\?\) AND created_at<\?\)/,
      );
      expect(plan).not.toMatch(/TEMP B-TREE|SCAN/);
    }
  });

  it("is one of the scheduled tasks", () => {
    expect(Object.keys(SCHEDULED_TASKS)).toContain("expired test videos");
  });
});

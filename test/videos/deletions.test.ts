import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeletionMessage } from "../../src/videos/deletion-queue";
import { forEachVideo } from "../../src/videos/r2-work";
import { IMAGES } from "../fixtures/images";
import { api, bearer, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { runQueue } from "../support/handlers";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A queue that keeps what is sent to it. */
function capturingQueue() {
  const sent: DeletionMessage[] = [];
  return { sent, queue: { send: async (body: DeletionMessage) => void sent.push(body) } as unknown as Queue };
}

/** A video with an open upload and a custom thumbnail: both are left in R2 by its delete. */
async function videoWithLeftovers(key: string) {
  const { video } = await newVideo(key);
  const put = await api(
    `/v1/videos/${video.id}/thumbnail`,
    bearer(key, { method: "PUT", headers: { "content-type": "image/png" }, body: IMAGES.rgbPng }),
  );
  const { thumbnailUrl } = (await put.json()) as { thumbnailUrl: string };
  const row = await env.DB.prepare("SELECT source_key, upload_r2_id, custom_thumbnail_key FROM videos WHERE id = ?")
    .bind(video.id)
    .first<{ source_key: string; upload_r2_id: string; custom_thumbnail_key: string }>();
  return { id: video.id, thumbnailUrl, row: row as NonNullable<typeof row> };
}

describe("a delete's follow-up", () => {
  it("is one queue message; its consumer publishes the events and cleans R2", async () => {
    const { key } = await newWorkspace();
    const videos = await Promise.all([videoWithLeftovers(key), videoWithLeftovers(key)]);
    const { sent, queue } = capturingQueue();
    const response = await apiWith(
      { DELETION_QUEUE: queue },
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "delete", videoIds: videos.map((v) => v.id) })),
    );
    expect(response.status).toBe(200);
    expect(sent).toHaveLength(1);
    // Nothing is done yet: the response did not wait for it.
    expect(await env.MEDIA.head(videos[0]?.row.custom_thumbnail_key ?? "")).not.toBeNull();
    const published = () =>
      env.DB.prepare(
        `SELECT count(*) AS n FROM outbox_events WHERE published_at IS NOT NULL AND subject_id IN (${videos.map(() => "?").join(",")})`,
      )
        .bind(...videos.map((v) => v.id))
        .first<number>("n");
    expect(await published()).toBe(0);

    const result = await runQueue("video-deletions", sent);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(await published()).toBe(2);
    for (const video of videos) {
      expect(await env.MEDIA.head(video.row.custom_thumbnail_key)).toBeNull();
      const upload = env.MEDIA.resumeMultipartUpload(video.row.source_key, video.row.upload_r2_id);
      await expect(upload.uploadPart(1, "x")).rejects.toThrow();
      expect((await api(new URL(video.thumbnailUrl).pathname)).status).toBe(404);
    }
    const leftovers = await env.DB.prepare(
      "SELECT count(*) AS n FROM videos WHERE id IN (?, ?) AND (upload_r2_id IS NOT NULL OR custom_thumbnail_key IS NOT NULL)",
    )
      .bind(videos[0]?.id, videos[1]?.id)
      .first<number>("n");
    expect(leftovers).toBe(0);
  });

  it("is retried by the queue when R2 fails, and the leftovers stay recorded for the sweep", async () => {
    const { key } = await newWorkspace();
    const video = await videoWithLeftovers(key);
    const { sent, queue } = capturingQueue();
    await apiWith({ DELETION_QUEUE: queue }, `/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = {
      delete: () => Promise.reject(new Error("R2 unavailable")),
      resumeMultipartUpload: env.MEDIA.resumeMultipartUpload.bind(env.MEDIA),
    } as unknown as R2Bucket;
    const result = await runQueue("video-deletions", sent, { MEDIA: failing });
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["m0"]);
    const row = await env.DB.prepare("SELECT custom_thumbnail_key FROM videos WHERE id = ?")
      .bind(video.id)
      .first<string | null>("custom_thumbnail_key");
    expect(row).toBe(video.row.custom_thumbnail_key);
    // The retry succeeds.
    expect((await runQueue("video-deletions", sent)).explicitAcks).toEqual(["m0"]);
    expect(await env.MEDIA.head(video.row.custom_thumbnail_key)).toBeNull();
  });

  it("acknowledges malformed messages, and dead letters after logging them", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await runQueue("video-deletions", [{ videoIds: ["nope"] }, {}])).explicitAcks).toEqual(["m0", "m1"]);
    expect((await runQueue("video-deletions-dlq", [{ videoIds: [], eventIds: [] }])).explicitAcks).toEqual(["m0"]);
  });
});

describe("the R2 work of deleted videos (issue 25, item 14)", () => {
  it("runs at most 10 videos' tasks at once across the isolate, whatever the batch, and says which failed", async () => {
    let now = 0;
    let most = 0;
    const task = async (row: { id: string }) => {
      now += 1;
      most = Math.max(most, now);
      await new Promise((resolve) => setTimeout(resolve, 1));
      now -= 1;
      if (row.id.endsWith("7")) throw new Error("R2 failed");
    };
    const rows = (prefix: string) => Array.from({ length: 100 }, (_, i) => ({ id: `${prefix}${i}` }));
    vi.spyOn(console, "error").mockImplementation(() => {});
    // Two messages of a batch, consumed side by side, share the isolate's places.
    const [first, second] = await Promise.all([
      forEachVideo(rows("a"), task, "test"),
      forEachVideo(rows("b"), task, "test"),
    ]);
    expect(most).toBe(10);
    expect(first?.length).toBe(90);
    expect(second?.map((row) => row.id)).not.toContain("b7");
    vi.restoreAllMocks();
  });
});

import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { parsePlan } from "../../media-plan/protocol.mjs";
import { posterKey, sourceKey } from "../../src/lib/storage-keys";
import type { DeletionMessage } from "../../src/videos/deletion-queue";
import {
  callback,
  encodeMessages,
  encoding,
  finishAll,
  lastJob,
  playable,
  probeFacts,
  result,
  runEncodes,
  stopEncodings,
  withFakeEncoder,
} from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { runQueue } from "../support/handlers";

// Frame-accurate clips as videos (docs/import-clips-search.md#clips-as-videos-clipof):
// `POST /v1/videos` with `clipOf`.

const encoder = withFakeEncoder();
afterEach(stopEncodings);

type ClipVideo = { id: string; status: string; livemode: boolean; duration: number | null; error: unknown };

function clip(key: string, clipOf: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return api("/v1/videos", bearer(key, json("POST", { clipOf, ...extra })));
}

async function row(id: string) {
  const found = await env.DB.prepare(
    "SELECT status, source_key, clip_of, clip_start, clip_end, duration, encode_plan, error_code, error_message FROM videos WHERE id = ?",
  )
    .bind(id)
    .first<Record<string, unknown>>();
  if (!found) throw new Error(`no row ${id}`);
  return found;
}

/** A clip that the API created: its video, and its encoding started on the fake encoder. */
async function clipped(key: string, clipOf: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const response = await clip(key, clipOf, extra);
  expect(response.status).toBe(201);
  const body = (await response.json()) as { video: ClipVideo; upload?: unknown };
  await runEncodes(encodeMessages().filter((message) => message.videoId === body.video.id));
  return body;
}

describe("POST /v1/videos with clipOf", () => {
  it("creates a video of the span, uploaded at once, with no upload session, reading the video's source", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    await finishAll(encoder(), source.id);
    const { video, upload } = await clipped(
      key,
      { videoId: source.id, start: 5, end: 12.6 },
      { title: "The goal", tags: ["clip"] },
    );
    expect(upload).toBeUndefined();
    expect(video).toMatchObject({
      status: "uploaded",
      livemode: true,
      duration: null,
      title: "The goal",
      tags: ["clip"],
    });
    expect(await row(video.id)).toMatchObject({
      source_key: sourceKey(source.projectId, source.id),
      clip_of: source.id,
      clip_start: 5,
      clip_end: 12.6,
    });

    // Its probe reads the video's source, and its plan is the span: 5 s in, 7.6 s long (190 frames).
    const probe = lastJob(encoder(), video.id, "probe");
    const read = await callback(probe, "source");
    expect(new Uint8Array(await read.arrayBuffer())).toEqual(new TextEncoder().encode("source bytes"));
    expect((await result(probe, { probe: probeFacts(20) })).status).toBe(204);
    const planned = await row(video.id);
    expect(planned).toMatchObject({ status: "processing", duration: 7.6 });
    const plan = parsePlan(JSON.parse(planned.encode_plan as string));
    expect(plan.source.offset).toBe(5);
    expect(plan.frames).toBe(190);
    const run = lastJob(encoder(), video.id, "segments");
    expect(run.plan.source.offset).toBe(5);
  });

  it("cuts a clip of a clip from the first video's source, its span moved by where the clip starts", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(30));
    const first = await clipped(key, { videoId: source.id, start: 10, end: 25 });
    await result(lastJob(encoder(), first.video.id, "probe"), { probe: probeFacts(30) });
    const second = await clipped(key, { videoId: first.video.id, start: 2, end: 4 });
    expect(await row(second.video.id)).toMatchObject({
      source_key: sourceKey(source.projectId, source.id),
      clip_of: source.id,
      clip_start: 12,
      clip_end: 14,
    });
  });

  it("errors the clip when the probe finds the source ends before the span", async () => {
    const { key } = await newWorkspace();
    const source = await encoding(encoder(), key);
    // The video is processing and not probed yet: its duration is unknown, so the span is taken.
    const { video } = await clipped(key, { videoId: source.id, start: 0, end: 30 });
    await result(lastJob(encoder(), video.id, "probe"), { probe: probeFacts(20) });
    expect(await row(video.id)).toMatchObject({ status: "errored", error_code: "invalid_source" });
    expect((await row(video.id)).error_message).toContain("the clip ends at 30 s");
  });

  it("answers the documented errors", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    const waiting = await newVideo(key);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ videoId: "01JD5Q3V7Y8N2M4K6P9R0S1T2V", start: 0, end: 5 }, 404, "video_not_found"],
      [{ videoId: "not-an-id", start: 0, end: 5 }, 404, "video_not_found"],
      [{ videoId: waiting.video.id, start: 0, end: 5 }, 409, "video_not_ready"],
      [{ videoId: source.id, start: 3, end: 3.5 }, 400, "invalid_body"],
      [{ videoId: source.id, start: 5, end: 2 }, 400, "invalid_body"],
      [{ videoId: source.id, start: -1, end: 5 }, 400, "invalid_body"],
      [{ videoId: source.id, start: 0 }, 400, "invalid_body"],
      [{ videoId: source.id, start: 0, end: 5, extra: 1 }, 400, "invalid_body"],
    ];
    for (const [clipOf, status, code] of cases) {
      const response = await clip(key, clipOf);
      expect([JSON.stringify(clipOf), response.status]).toEqual([JSON.stringify(clipOf), status]);
      expect(await errorCode(response)).toBe(code);
    }
    const short = await clip(key, { videoId: source.id, start: 3, end: 3.5 });
    expect(await short.json()).toMatchObject({
      error: { details: [{ path: "clipOf.end", message: "must be at least 1 s after start" }] },
    });
    const past = await clip(key, { videoId: source.id, start: 15, end: 20.5 });
    expect(past.status).toBe(400);
    expect(await past.json()).toMatchObject({
      error: { code: "invalid_body", details: [{ path: "clipOf.end" }] },
    });

    // A clip is not also an import, nor a direct upload's video.
    const both = await clip(key, { videoId: source.id, start: 0, end: 5 }, { sourceUrl: "https://example.com/a.mp4" });
    expect(await both.json()).toMatchObject({ error: { code: "invalid_body", details: [{ path: "sourceUrl" }] } });
    const tus = await api(
      "/v1/uploads",
      bearer(key, json("POST", { video: { clipOf: { videoId: source.id, start: 0, end: 5 } } })),
    );
    expect([tus.status, await errorCode(tus)]).toEqual([400, "invalid_body"]);

    await api(`/v1/videos/${source.id}`, bearer(key, { method: "DELETE" }));
    expect(await errorCode(await clip(key, { videoId: source.id, start: 0, end: 5 }))).toBe("video_not_found");
  });

  it("is a video of the mode of the video it is cut from, which a key of the other mode does not see", async () => {
    const live = await newWorkspace();
    const source = await playable(encoder(), live.key, probeFacts(20));
    const { video } = await clipped(live.key, { videoId: source.id, start: 1, end: 3 });
    expect(video.livemode).toBe(true);
    const test = await newWorkspace({ mode: "test" });
    expect(await errorCode(await clip(test.key, { videoId: source.id, start: 1, end: 3 }))).toBe("video_not_found");
  });
});

describe("a clip's span and visibility come from the video it is cut from", () => {
  const past = async (response: Response) => {
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_body", details: [{ path: "clipOf.end" }] } });
  };

  /** A clip not probed yet, processing: as once its encoder has started (the pool's slots are not this test's). */
  const unprobed = async (key: string, clipOf: Record<string, unknown>) => {
    const { video } = await clipped(key, clipOf);
    await env.DB.prepare("UPDATE videos SET status = 'processing' WHERE id = ? AND duration IS NULL")
      .bind(video.id)
      .run();
    expect(await row(video.id)).toMatchObject({ status: "processing", duration: null });
    return video.id;
  };

  it("bounds a clip of a clip still processing by the first clip's span, down a chain of clips", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(30));
    // A 5 s clip, still processing: its duration is not known, its span is.
    const first = await unprobed(key, { videoId: source.id, start: 3, end: 8 });
    await past(await clip(key, { videoId: first, start: 0, end: 14 }));
    await past(await clip(key, { videoId: first, start: 4, end: 5.5 }));
    const second = await unprobed(key, { videoId: first, start: 1, end: 5 });
    expect(await row(second)).toMatchObject({ clip_of: source.id, clip_start: 4, clip_end: 8 });
    // A clip of that clip (4 s long), and of that one (3.5 s): each within the one before.
    await past(await clip(key, { videoId: second, start: 0, end: 4.5 }));
    const third = await unprobed(key, { videoId: second, start: 0.5, end: 4 });
    expect(await row(third)).toMatchObject({ clip_of: source.id, clip_start: 4.5, clip_end: 8 });
    await past(await clip(key, { videoId: third, start: 1, end: 3.6 }));
    const fourth = await unprobed(key, { videoId: third, start: 1, end: 3.5 });
    expect(await row(fourth)).toMatchObject({ clip_of: source.id, clip_start: 5.5, clip_end: 8 });
  });

  it("takes a span to a probed clip's duration, never past the clip's end in the source", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(30));
    // Its jobs end (a viewer's first segments hold an interactive slot), so the clips' probes find slots.
    await finishAll(encoder(), source.id);
    const first = await clipped(key, { videoId: source.id, start: 2.2, end: 7.3 });
    await result(lastJob(encoder(), first.video.id, "probe"), { probe: probeFacts(30) });
    // 5.1 s at 25 fps is 127.5 frames: the clip lasts 128, 5.12 s.
    expect(await row(first.video.id)).toMatchObject({ status: "processing", duration: 5.12 });
    await finishAll(encoder(), first.video.id);
    const whole = await clipped(key, { videoId: first.video.id, start: 0.12, end: 5.12 });
    expect(await row(whole.video.id)).toMatchObject({ clip_start: 2.32, clip_end: 7.3 });
    await past(await clip(key, { videoId: first.video.id, start: 1, end: 5.2 }));
    // A length in binary fractions: 1.4 - 0.1 is 1.2999999999999998, and a clip to 1.3 s of that clip is taken.
    const short = await clipped(key, { videoId: source.id, start: 0.1, end: 1.4 });
    expect((await clip(key, { videoId: short.video.id, start: 0, end: 1.3 })).status).toBe(201);
  });

  it("bounds a clip of a test video being probed by the test video's first seconds", async () => {
    const { key } = await newWorkspace({ mode: "test" });
    const source = await encoding(encoder(), key);
    await past(await clip(key, { videoId: source.id, start: 12, end: 18 }));
    const { video } = await clipped(key, { videoId: source.id, start: 2, end: 10 });
    expect(await row(video.id)).toMatchObject({ clip_start: 2, clip_end: 10 });
  });

  it("takes its video's visibility unless the request gives one", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    await finishAll(encoder(), source.id);
    const patched = await api(`/v1/videos/${source.id}`, bearer(key, json("PATCH", { visibility: "private" })));
    expect(patched.status).toBe(200);
    const span = { videoId: source.id, start: 1, end: 3 };
    const kept = await clipped(key, span);
    expect((kept.video as ClipVideo & { visibility: string }).visibility).toBe("private");
    const given = await clipped(key, span, { visibility: "unlisted" });
    expect((given.video as ClipVideo & { visibility: string }).visibility).toBe("unlisted");
    // A clip of that unlisted clip is unlisted.
    const again = await clipped(key, { videoId: given.video.id, start: 0, end: 1.5 });
    expect((again.video as ClipVideo & { visibility: string }).visibility).toBe("unlisted");
    expect((await api(`/v1/videos/${kept.video.id}`, bearer(key))).status).toBe(200);
  });
});

describe("a clip outlives the video it was cut from", () => {
  /** Deletes a video and runs the deletions queue's consumer over what the delete sent. */
  async function deleteAndCleanUp(key: string, id: string) {
    const sent: DeletionMessage[] = [];
    const queue = { send: async (body: DeletionMessage) => void sent.push(body) } as unknown as Queue;
    const response = await apiWith({ DELETION_QUEUE: queue }, `/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(204);
    await runQueue("video-deletions", sent);
  }

  it("keeps the source while a clip is not cleaned up, and the last one removes it", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    await finishAll(encoder(), source.id);
    const { video } = await clipped(key, { videoId: source.id, start: 2, end: 6 });
    const original = sourceKey(source.projectId, source.id);

    await deleteAndCleanUp(key, source.id);
    // The deleted video's own outputs are gone; its source stays for the clip.
    expect(await env.MEDIA.head(posterKey(source.projectId, source.id))).toBeNull();
    expect(await env.MEDIA.head(original)).not.toBeNull();
    // The clip still encodes from it.
    const probe = lastJob(encoder(), video.id, "probe");
    expect((await callback(probe, "source")).status).toBe(200);

    await deleteAndCleanUp(key, video.id);
    expect(await env.MEDIA.head(original)).toBeNull();
  });

  it("removes the source when the video and its clips are deleted together", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    const first = await clipped(key, { videoId: source.id, start: 2, end: 6 });
    const second = await clipped(key, { videoId: first.video.id, start: 0, end: 2 });
    const sent: DeletionMessage[] = [];
    const queue = { send: async (body: DeletionMessage) => void sent.push(body) } as unknown as Queue;
    const videoIds = [second.video.id, source.id, first.video.id];
    const response = await apiWith(
      { DELETION_QUEUE: queue },
      "/v1/videos/bulk",
      bearer(key, json("POST", { action: "delete", videoIds })),
    );
    expect(response.status).toBe(200);
    await runQueue("video-deletions", sent);
    expect(await env.MEDIA.head(sourceKey(source.projectId, source.id))).toBeNull();
  });

  it("leaves the source to its video when the clip goes first", async () => {
    const { key } = await newWorkspace();
    const source = await playable(encoder(), key, probeFacts(20));
    const { video } = await clipped(key, { videoId: source.id, start: 2, end: 6 });
    const original = sourceKey(source.projectId, source.id);
    await deleteAndCleanUp(key, video.id);
    expect(await env.MEDIA.head(original)).not.toBeNull();
    expect((await api(`/v1/videos/${source.id}`, bearer(key))).status).toBe(200);
    await deleteAndCleanUp(key, source.id);
    expect(await env.MEDIA.head(original)).toBeNull();
  });
});

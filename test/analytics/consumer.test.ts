import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { foldBeacons } from "../../src/analytics/fold";
import { foldStatements, readViews } from "../../src/analytics/queries";
import { deleteExpiredViews } from "../../src/analytics/retention";
import { api, bearer, newKey, withCookie } from "../helpers";
import {
  analyticsWorkspace,
  beaconBody,
  beaconSender,
  consume,
  message,
  newViewId,
  readyVideo,
  videoAnalytics,
} from "./support";

const HOUR = 3_600_000;
/** Inside the current hour, so the default range (the last 7 days) holds every beacon. */
const base = () => Math.floor(Date.now() / HOUR) * HOUR + 1000;

describe("the beacons queue's consumer", () => {
  it("folds a view's beacons into its video's figures: one view, watch time, startup, rebuffering, renditions", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const viewId = newViewId();
    const t = base();
    const result = await consume([
      message(video, t, beaconBody(viewId, { event: "start" })),
      message(video, t + 10_000, beaconBody(viewId, { watchedMs: 9000, startupMs: 450, rendition: "720p" })),
      message(
        video,
        t + 20_000,
        beaconBody(viewId, { watchedMs: 15_000, rebufferCount: 1, rebufferMs: 1000, rendition: "360p" }),
      ),
    ]);
    expect(result.explicitAcks).toHaveLength(0);
    expect(result.ackAll).toBe(true);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect(figures.views).toBe(1);
    expect(figures.watchTimeSeconds).toBe(15);
    expect(figures.startupTimeMs).toEqual({ p50: 450, p95: 495 });
    expect(figures.rebufferRatio).toBeCloseTo(1000 / 15_000, 4);
    expect(figures.errorViews).toBe(0);
    expect(figures.renditions).toEqual([
      { resolution: "720p", share: 0.6 },
      { resolution: "360p", share: 0.4 },
    ]);
    expect(figures.series).toHaveLength(8);
    expect(figures.series.at(-1)).toMatchObject({ views: 1, watchTimeSeconds: 15 });
  });

  it("counts a repeated beacon once, in one batch or across batches", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const viewId = newViewId();
    const t = base();
    const start = message(video, t, beaconBody(viewId, { event: "start" }));
    const beat = message(video, t + 10_000, beaconBody(viewId, { watchedMs: 10_000, error: "decode" }));
    await consume([start, beat, beat]);
    await consume([beat, start]);
    await consume([beat]);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect([figures.views, figures.watchTimeSeconds, figures.errorViews]).toEqual([1, 10, 1]);
  });

  it("counts reordered beacons once: a late one with smaller totals adds nothing", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const viewId = newViewId();
    const t = base();
    await consume([message(video, t, beaconBody(viewId, { event: "start" }))]);
    await consume([message(video, t + 20_000, beaconBody(viewId, { watchedMs: 20_000, rebufferMs: 500 }))]);
    await consume([message(video, t + 10_000, beaconBody(viewId, { watchedMs: 10_000, rebufferMs: 200 }))]);
    // In one batch, out of order: sorted by arrival first.
    const other = newViewId();
    await consume([
      message(video, t + 20_000, beaconBody(other, { watchedMs: 20_000 })),
      message(video, t, beaconBody(other, { event: "start" })),
      message(video, t + 10_000, beaconBody(other, { watchedMs: 10_000 })),
    ]);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect([figures.views, figures.watchTimeSeconds]).toEqual([2, 40]);
    expect(figures.rebufferRatio).toBeCloseTo(500 / 40_000, 4);
  });

  it("lets a view's watch time grow by no more than the wall time since its previous beacon plus 10 %", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const viewId = newViewId();
    const t = base();
    await consume([
      // A first beacon is credited at most one heartbeat's 10 s and 10 %.
      message(video, t, beaconBody(viewId, { event: "start", watchedMs: 3_600_000 })),
    ]);
    expect((await videoAnalytics(ws.key, ws.video)).watchTimeSeconds).toBe(11);
    await consume([message(video, t + 10_000, beaconBody(viewId, { watchedMs: 3_600_000, rebufferMs: 3_600_000 }))]);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect(figures.watchTimeSeconds).toBe(22);
    expect(figures.rebufferRatio).toBe(0.5);
    // Honest totals below what was credited add nothing until they pass it.
    await consume([message(video, t + 20_000, beaconBody(viewId, { watchedMs: 20_000 }))]);
    expect((await videoAnalytics(ws.key, ws.video)).watchTimeSeconds).toBe(22);
    await consume([message(video, t + 30_000, beaconBody(viewId, { watchedMs: 30_000 }))]);
    expect((await videoAnalytics(ws.key, ws.video)).watchTimeSeconds).toBe(30);
  });

  it("keeps a view id to the first video it named", async () => {
    const ws = await analyticsWorkspace();
    const second = await readyVideo(ws.key);
    const viewId = newViewId();
    const t = base();
    await consume([
      message({ videoId: ws.video, projectId: ws.project.id }, t, beaconBody(viewId, { event: "start" })),
      message({ videoId: second, projectId: ws.project.id }, t + 5000, beaconBody(viewId, { watchedMs: 5000 })),
    ]);
    expect((await videoAnalytics(ws.key, ws.video)).views).toBe(1);
    expect((await videoAnalytics(ws.key, second)).views).toBe(0);
  });

  it("drops a malformed message and folds the rest", async () => {
    const ws = await analyticsWorkspace();
    const viewId = newViewId();
    const good = message({ videoId: ws.video, projectId: ws.project.id }, base(), beaconBody(viewId));
    const result = await consume([good, { ...good, beacon: { viewId } } as unknown as typeof good]);
    expect(result.ackAll).toBe(true);
    expect((await videoAnalytics(ws.key, ws.video)).views).toBe(1);
  });

  it("fails a fold written over views another fold changed since it read them, leaving nothing of it", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const viewId = newViewId();
    const t = base();
    const read = await readViews(env.DB, [viewId]);
    const first = foldBeacons(read, [message(video, t, beaconBody(viewId, { event: "start" }))]);
    const second = foldBeacons(read, [message(video, t + 1, beaconBody(viewId, { watchedMs: 1 }))]);
    await env.DB.batch(foldStatements(env.DB, first));
    await expect(env.DB.batch(foldStatements(env.DB, second))).rejects.toThrow();
    const figures = await videoAnalytics(ws.key, ws.video);
    expect([figures.views, figures.watchTimeSeconds]).toEqual([1, 0]);
    // Folded again over what is stored now, as the queue's retry does, it counts.
    const again = foldBeacons(await readViews(env.DB, [viewId]), [
      message(video, t + 1, beaconBody(viewId, { watchedMs: 1 })),
    ]);
    await env.DB.batch(foldStatements(env.DB, again));
    expect((await videoAnalytics(ws.key, ws.video)).watchTimeSeconds).toBe(0.001);
  });

  it("writes a batch of 100 beacons of 100 views as 100 view rows and a few rollup rows", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const t = base();
    const ids = Array.from({ length: 100 }, () => newViewId());
    const batchAt = async (offset: number, watchedMs: number) => {
      const beacons = ids.map((viewId, i) =>
        message(video, t + offset + i, beaconBody(viewId, { watchedMs, startupMs: 300, rendition: "720p" })),
      );
      const fold = foldBeacons(await readViews(env.DB, ids), beacons);
      const results = await env.DB.batch(foldStatements(env.DB, fold));
      return results.reduce((sum, result) => sum + (result.meta.rows_written ?? 0), 0);
    };
    // New views: each row with its retention index entry; the video's and the project's new hour
    // rows with their index entries, and their rendition rows.
    expect(await batchAt(0, 5000)).toBeLessThanOrEqual(2 * 100 + 2 * 2 + 2);
    // Their next beacons: one row a view, and the four rollup rows, added to.
    expect(await batchAt(10_000, 15_000)).toBeLessThanOrEqual(100 + 4);
    expect(await videoAnalytics(ws.key, ws.video)).toMatchObject({ views: 100, watchTimeSeconds: 1500 });
  });

  it("keeps a view's state two days after its first beacon, and its figures after that", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const now = Date.now();
    const old = newViewId();
    const recent = newViewId();
    await consume([
      message(video, now - 3 * 24 * HOUR, beaconBody(old, { watchedMs: 1000 })),
      message(video, now - 2 * 24 * HOUR + HOUR, beaconBody(recent, { watchedMs: 1000 })),
    ]);
    await deleteExpiredViews(env.DB, now);
    const left = await readViews(env.DB, [old, recent]);
    expect([...left.keys()]).toEqual([recent]);
    expect((await videoAnalytics(ws.key, ws.video)).views).toBe(2);
  });

  it("takes the route's beacons end to end: sent, queued, folded, answered", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const viewId = newViewId();
    expect((await send(ws.video, beaconBody(viewId, { event: "start" }))).status).toBe(204);
    expect((await send(ws.video, beaconBody(viewId, { event: "end", watchedMs: 0, startupMs: 900 }))).status).toBe(204);
    await consume(sent);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect(figures.views).toBe(1);
    expect(figures.startupTimeMs).not.toBeNull();
  });
});

describe("what one client address adds (through the route, then the consumer)", () => {
  it("keeps the figures of 20 honest viewers behind one address exact, and adds nothing of a 21st that minute", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const office = Array.from({ length: 20 }, () => newViewId());
    // Each plays 30 s: a start, then a heartbeat every 10 s (the first with its startup), 720p then 360p.
    const rounds = [
      { event: "start" },
      { watchedMs: 10_000, startupMs: 400, rendition: "720p" },
      { watchedMs: 20_000, rendition: "720p" },
      { watchedMs: 30_000, rebufferCount: 1, rebufferMs: 500, rendition: "360p" },
    ];
    for (const fields of rounds) {
      for (const viewId of office) expect((await send(ws.video, beaconBody(viewId, fields))).status).toBe(204);
    }
    expect((await send(ws.video, beaconBody(newViewId(), { event: "start" }))).status).toBe(204);
    expect(sent).toHaveLength(80);
    // Folded as they would arrive: each viewer's beacons 10 s apart (the route stamped them ms apart).
    const t = base();
    await consume(sent.map((m, k) => ({ ...m, at: t + Math.floor(k / 20) * 10_000 + (k % 20) })));
    const figures = await videoAnalytics(ws.key, ws.video);
    expect(figures).toMatchObject({
      views: 20,
      watchTimeSeconds: 600,
      startupTimeMs: { p50: expect.any(Number), p95: expect.any(Number) },
      errorViews: 0,
      // Rounded to four decimals, as the answer gives them.
      rebufferRatio: 0.0167,
      renditions: [
        { resolution: "720p", share: 0.6667 },
        { resolution: "360p", share: 0.3333 },
      ],
    });
  });

  it("bounds what invented view ids add: 20 views of a video a minute, each at most one heartbeat's watch time", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    for (let i = 0; i < 100; i++) {
      const claim = beaconBody(newViewId(), { watchedMs: 3_600_000, rendition: "720p" });
      expect((await send(ws.video, claim)).status).toBe(204);
    }
    await consume(sent);
    const figures = await videoAnalytics(ws.key, ws.video);
    expect(figures.views).toBe(20);
    // A view's first beacon is credited at most 11 s (10 s and 10 %), whatever it claims.
    expect(figures.watchTimeSeconds).toBeLessThanOrEqual(20 * 11);
  });

  it("counts a rendition the video does not have in no share, and its watch time in the view's", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const viewId = newViewId();
    expect((await send(ws.video, beaconBody(viewId, { event: "start" }))).status).toBe(204);
    expect((await send(ws.video, beaconBody(viewId, { watchedMs: 10_000, rendition: "4320p" }))).status).toBe(204);
    expect((await send(ws.video, beaconBody(viewId, { watchedMs: 20_000, rendition: "720p" }))).status).toBe(204);
    const t = base();
    await consume(sent.map((m, k) => ({ ...m, at: t + k * 10_000 })));
    const figures = await videoAnalytics(ws.key, ws.video);
    expect([figures.watchTimeSeconds, figures.renditions]).toEqual([20, [{ resolution: "720p", share: 1 }]]);
  });
});

describe("GET /v1/videos/{id}/analytics and GET /v1/analytics", () => {
  it("count test mode apart: each key sees its own mode; a cookie sees both, or one with ?mode=", async () => {
    const ws = await analyticsWorkspace();
    const testKey = await newKey(ws.session, ws.project.id, ["read", "write"], "test");
    const testVideo = await readyVideo(testKey);
    const t = base();
    await consume([
      message({ videoId: ws.video, projectId: ws.project.id }, t, beaconBody(newViewId(), { watchedMs: 4000 })),
      message(
        { videoId: testVideo, projectId: ws.project.id, livemode: false },
        t,
        beaconBody(newViewId(), { watchedMs: 2000 }),
      ),
      message(
        { videoId: testVideo, projectId: ws.project.id, livemode: false },
        t,
        beaconBody(newViewId(), { watchedMs: 2000 }),
      ),
    ]);
    const project = async (init: RequestInit, query = "") =>
      (await (await api(`/v1/analytics${query}`, init)).json()) as {
        views: number;
        watchTimeSeconds: number;
        topVideos: { videoId: string; views: number; watchTimeSeconds: number; title: string | null }[];
      };
    const live = await project(bearer(ws.key));
    expect([live.views, live.watchTimeSeconds]).toEqual([1, 4]);
    expect(live.topVideos).toEqual([{ videoId: ws.video, title: null, views: 1, watchTimeSeconds: 4 }]);
    const test = await project(bearer(testKey));
    expect([test.views, test.watchTimeSeconds]).toEqual([2, 4]);
    expect(test.topVideos.map((v) => v.videoId)).toEqual([testVideo]);
    const both = await project(withCookie(ws.session), `?projectId=${ws.project.id}`);
    expect(both.views).toBe(3);
    expect(both.topVideos.map((v) => v.videoId)).toEqual([ws.video, testVideo]);
    const narrowed = await project(withCookie(ws.session), `?projectId=${ws.project.id}&mode=test`);
    expect(narrowed.views).toBe(2);
    // A key does not see the other mode's video.
    const other = await api(`/v1/videos/${testVideo}/analytics`, bearer(ws.key));
    expect(other.status).toBe(404);
    expect((await videoAnalytics(testKey, testVideo)).views).toBe(2);
  });

  it("answers hourly and daily series over the range asked for", async () => {
    const ws = await analyticsWorkspace();
    const video = { videoId: ws.video, projectId: ws.project.id };
    const day = Date.UTC(2026, 10, 20);
    await consume([
      message(video, day + 2 * HOUR + 5, beaconBody(newViewId(), { watchedMs: 3000 })),
      message(video, day + 26 * HOUR, beaconBody(newViewId(), { watchedMs: 5000 })),
    ]);
    const range = `?from=${new Date(day).toISOString()}&to=${new Date(day + 2 * 24 * HOUR).toISOString()}`;
    const daily = await videoAnalytics(ws.key, ws.video, range);
    expect(daily.series).toEqual([
      { start: "2026-11-20T00:00:00.000Z", views: 1, watchTimeSeconds: 3 },
      { start: "2026-11-21T00:00:00.000Z", views: 1, watchTimeSeconds: 5 },
    ]);
    const hourly = await videoAnalytics(ws.key, ws.video, `${range}&interval=hour`);
    expect(hourly.series).toHaveLength(48);
    expect(hourly.series[2]).toEqual({ start: "2026-11-20T02:00:00.000Z", views: 1, watchTimeSeconds: 3 });
    const none = await videoAnalytics(ws.key, ws.video, "?from=2026-10-01T00:00:00.000Z&to=2026-10-02T00:00:00Z");
    expect(none).toMatchObject({
      views: 0,
      watchTimeSeconds: 0,
      startupTimeMs: null,
      rebufferRatio: 0,
      renditions: [],
    });
  });

  it("refuses a bad range or interval with 400 invalid_query, and an unknown video with 404", async () => {
    const ws = await analyticsWorkspace();
    for (const query of [
      "?from=yesterday",
      "?to=2026-13-01T00:00:00Z",
      "?interval=week",
      "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
      "?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z",
    ]) {
      for (const path of [`/v1/videos/${ws.video}/analytics`, "/v1/analytics"]) {
        const response = await api(`${path}${query}`, bearer(ws.key));
        expect(response.status, `${path}${query}`).toBe(400);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_query");
      }
    }
    const ok = await api("/v1/analytics?from=2026-01-01T00:00:00Z&to=2026-03-31T00:00:00Z", bearer(ws.key));
    expect(ok.status).toBe(200);
    const unknown = await api("/v1/videos/01JD5Q3V7Y8N2M4K6P9R0S1T2V/analytics", bearer(ws.key));
    expect(unknown.status).toBe(404);
  });
});

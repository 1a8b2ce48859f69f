import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, bearer, clientIp, errorCode, json, newVideo } from "../helpers";
import { analyticsWorkspace, beaconBody, beaconSender, newViewId, readyVideo } from "./support";

describe("POST /play/{x}/beacons", () => {
  it("queues a valid beacon with its video's project, mode and arrival time, and answers 204 with CORS", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const before = Date.now();
    const body = beaconBody(newViewId(), { event: "start", rendition: "720p" });
    const response = await send(ws.video, body);
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("ratelimit-policy")).toMatch(/^"beacons(_per_view)?";q=(60|600);w=60$/);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ beacon: body, videoId: ws.video, projectId: ws.project.id, livemode: true });
    expect(sent[0]?.at).toBeGreaterThanOrEqual(before);
  });

  it("answers a preflight from any origin", async () => {
    const ws = await analyticsWorkspace();
    const response = await api(`/play/${ws.video}/beacons`, {
      method: "OPTIONS",
      headers: {
        origin: "https://player.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type");
    const get = await api(`/play/${ws.video}/beacons`);
    expect([get.status, get.headers.get("allow"), await errorCode(get)]).toEqual([
      405,
      "OPTIONS, POST",
      "method_not_allowed",
    ]);
  });

  it("refuses a body that is not a strict beacon of at most 4 KiB with 400 invalid_body, queueing nothing", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const viewId = newViewId();
    const bad: unknown[] = [
      beaconBody(viewId, { extra: 1 }),
      beaconBody("short"),
      beaconBody("x".repeat(65)),
      beaconBody("has spaces in it, sadly"),
      beaconBody(viewId, { event: "pause" }),
      beaconBody(viewId, { watchedMs: -1 }),
      beaconBody(viewId, { watchedMs: 1.5 }),
      beaconBody(viewId, { rebufferMs: "3" }),
      beaconBody(viewId, { playheadSeconds: -2 }),
      beaconBody(viewId, { rendition: "HD" }),
      beaconBody(viewId, { error: "" }),
      beaconBody(viewId, { error: "x".repeat(201) }),
      beaconBody(viewId, { error: "bad\u0007bell" }),
      { viewId, event: "heartbeat" },
      beaconBody(viewId, { error: "e".repeat(200), rendition: "360p", pad: "p".repeat(4000) }),
      "{not json",
      "[]",
    ];
    for (const body of bad) {
      const response = await send(ws.video, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await errorCode(response)).toBe("invalid_body");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
    const big = JSON.stringify({ ...beaconBody(viewId), error: "x".repeat(190) }).padEnd(4097, " ");
    expect((await send(ws.video, big)).status).toBe(400);
    const wrongType = await send(ws.video, beaconBody(viewId), { "content-type": "text/plain" });
    expect(await errorCode(wrongType)).toBe("invalid_body");
    expect(sent).toHaveLength(0);
  });

  it("answers as /play/ does for unknown, deleted, unplayable and private videos; a token plays a private one", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const body = beaconBody(newViewId());
    expect((await send("01JD5Q3V7Y8N2M4K6P9R0S1T2V", body)).status).toBe(404);
    const waiting = (await newVideo(ws.key)).video.id;
    const notPlayable = await send(waiting, body);
    expect([notPlayable.status, await errorCode(notPlayable)]).toEqual([404, "not_found"]);
    const gone = await readyVideo(ws.key);
    await api(`/v1/videos/${gone}`, bearer(ws.key, { method: "DELETE" }));
    expect((await send(gone, body)).status).toBe(404);
    const forged = await send("not-a-token", body);
    expect([forged.status, await errorCode(forged)]).toEqual([403, "invalid_playback_token"]);

    const secret = await readyVideo(ws.key, { visibility: "private" });
    const byId = await send(secret, body);
    expect([byId.status, await errorCode(byId)]).toEqual([403, "playback_token_required"]);
    expect(byId.headers.get("access-control-allow-origin")).toBe("*");
    const minted = await api(`/v1/videos/${secret}/playback-tokens`, bearer(ws.key, json("POST", {})));
    const { token } = (await minted.json()) as { token: string };
    expect((await send(token, body)).status).toBe(204);
    expect(sent.map((m) => m.videoId)).toEqual([secret]);
  });

  it("takes 60 beacons a minute per view, then 429 rate_limited with Retry-After", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const viewId = newViewId();
    for (let i = 0; i < 60; i++) {
      const response = await send(ws.video, beaconBody(viewId, { watchedMs: i * 10 }));
      expect(response.status).toBe(204);
    }
    const refused = await send(ws.video, beaconBody(viewId, { watchedMs: 601 }));
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit-policy")).toBe('"beacons_per_view";q=60;w=60');
    expect(refused.headers.get("ratelimit")).toMatch(/^"beacons_per_view";r=0;t=\d+$/);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    // Another view from the same address still passes.
    expect((await send(ws.video, beaconBody(newViewId()))).status).toBe(204);
    expect(sent).toHaveLength(61);
  });

  it("takes 600 beacons a minute per client address, then 429; another address still passes", async () => {
    const ws = await analyticsWorkspace();
    const ip = clientIp();
    const { send } = beaconSender(ip);
    const statuses: number[] = [];
    for (let i = 0; i < 601; i += 1) {
      statuses.push((await send(ws.video, beaconBody(newViewId()))).status);
    }
    expect(statuses.slice(0, 600).every((status) => status === 204)).toBe(true);
    expect(statuses[600]).toBe(429);
    const last = await send(ws.video, beaconBody(newViewId()));
    expect(last.headers.get("ratelimit-policy")).toBe('"beacons";q=600;w=60');
    expect((await beaconSender().send(ws.video, beaconBody(newViewId()))).status).toBe(204);
  }, 120_000);

  it("counts at most 20 views of a video a minute started from one client address; more answer 204 and add nothing", async () => {
    const ws = await analyticsWorkspace();
    const other = await readyVideo(ws.key);
    const ip = clientIp();
    const { sent, send } = beaconSender(ip);
    const started = Array.from({ length: 20 }, () => newViewId());
    const invented = Array.from({ length: 10 }, () => newViewId());
    for (const viewId of [...started, ...invented]) {
      const response = await send(ws.video, beaconBody(viewId, { event: "start" }));
      expect(response.status).toBe(204);
      expect(response.headers.get("ratelimit-policy")).toMatch(/^"beacons(_per_view)?";q=(60|600);w=60$/);
    }
    expect(sent.map((m) => m.beacon.viewId)).toEqual(started);
    // The views it started go on counting; the others' later beacons add nothing either.
    for (const viewId of [...started, ...invented]) {
      expect((await send(ws.video, beaconBody(viewId, { watchedMs: 1000 }))).status).toBe(204);
    }
    expect(sent.map((m) => m.beacon.viewId)).toEqual([...started, ...started]);
    // Another video's views, and another address's, are counted apart.
    expect((await send(other, beaconBody(newViewId()))).status).toBe(204);
    const elsewhere = beaconSender();
    expect((await elsewhere.send(ws.video, beaconBody(newViewId()))).status).toBe(204);
    expect([sent.length, elsewhere.sent.length]).toEqual([41, 1]);
  });

  it("leaves out a rendition the video does not have, keeping the beacon", async () => {
    const ws = await analyticsWorkspace();
    const { sent, send } = beaconSender();
    const viewId = newViewId();
    expect((await send(ws.video, beaconBody(viewId, { rendition: "1080p", watchedMs: 10 }))).status).toBe(204);
    expect((await send(ws.video, beaconBody(viewId, { rendition: "720p", watchedMs: 20 }))).status).toBe(204);
    expect(sent.map((m) => [m.beacon.rendition, m.beacon.watchedMs])).toEqual([
      [undefined, 10],
      ["720p", 20],
    ]);
    expect("rendition" in (sent[0]?.beacon ?? {})).toBe(false);
  });

  it("queues a test-mode video's beacons as test mode", async () => {
    const ws = await analyticsWorkspace("test");
    const { sent, send } = beaconSender();
    expect((await send(ws.video, beaconBody(newViewId()))).status).toBe(204);
    expect(sent[0]?.livemode).toBe(false);
  });

  it("writes nothing to D1", async () => {
    const ws = await analyticsWorkspace();
    const { send } = beaconSender();
    const count = () =>
      env.DB.prepare(
        "SELECT (SELECT count(*) FROM analytics_views) + (SELECT count(*) FROM analytics_hours) AS n",
      ).first<{
        n: number;
      }>();
    const before = await count();
    expect((await send(ws.video, beaconBody(newViewId(), { watchedMs: 5000 }))).status).toBe(204);
    expect(await count()).toEqual(before);
  });
});

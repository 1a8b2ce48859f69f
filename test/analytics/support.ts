import { env } from "cloudflare:workers";
import type { BeaconMessage } from "../../src/analytics/beacon";
import { BEACON_QUEUE } from "../../src/analytics/queue";
import { api, bearer, clientIp, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { runQueue } from "../support/handlers";
import { sentMessage } from "../support/queues";

/** The renditions `readyVideo` gives its videos. */
export const RENDITIONS = [
  { resolution: "360p", width: 640, height: 360 },
  { resolution: "720p", width: 1280, height: 720 },
];

/**
 * A video of the key's project made playable by its row alone (status ready, `RENDITIONS`): the
 * beacon route reads nothing else of it, and these tests are about beacons, not encoding.
 */
export async function readyVideo(key: string, body: Record<string, unknown> = {}): Promise<string> {
  const { video } = await newVideo(key, body);
  await env.DB.prepare("UPDATE videos SET status = 'ready', renditions = ? WHERE id = ?")
    .bind(JSON.stringify(RENDITIONS), video.id)
    .run();
  return video.id;
}

export async function analyticsWorkspace(mode: "live" | "test" = "live") {
  const ws = await newWorkspace({ mode });
  return { ...ws, video: await readyVideo(ws.key) };
}

let views = 0;
/** A view id of its own (16 to 64 characters of [A-Za-z0-9_-]). */
export function newViewId(): string {
  views += 1;
  return `view-${Date.now().toString(36)}-${views}-${Math.random().toString(36).slice(2, 10)}`;
}

export type BeaconBody = Record<string, unknown>;

export function beaconBody(viewId: string, fields: BeaconBody = {}): BeaconBody {
  return {
    viewId,
    event: "heartbeat",
    playheadSeconds: 0,
    watchedMs: 0,
    rebufferCount: 0,
    rebufferMs: 0,
    ...fields,
  };
}

/**
 * Sends beacons through the real route, with the queue replaced by one that keeps what was sent,
 * from one client address (a new one unless given).
 */
export function beaconSender(ip = clientIp()) {
  const sent: BeaconMessage[] = [];
  const queue = {
    send: async (body: BeaconMessage) => {
      sent.push(body);
      return sentMessage;
    },
    sendBatch: async () => sentMessage,
  } as unknown as Queue;
  const send = (subject: string, body: unknown, headers: Record<string, string> = {}) =>
    apiWith(
      { BEACON_QUEUE: queue },
      `/play/${subject}/beacons`,
      json("POST", body, { "cf-connecting-ip": ip, origin: "https://player.example", ...headers }),
    );
  return { sent, send };
}

/** A beacon message as the route queues it, for the consumer's tests. */
export function message(
  video: { videoId: string; projectId: string; livemode?: boolean },
  at: number,
  beacon: BeaconBody,
): BeaconMessage {
  return {
    videoId: video.videoId,
    projectId: video.projectId,
    livemode: video.livemode ?? true,
    at,
    beacon: beacon as BeaconMessage["beacon"],
  };
}

export function consume(messages: BeaconMessage[]) {
  return runQueue(BEACON_QUEUE, messages);
}

export async function videoAnalytics(key: string, videoId: string, query = "") {
  const response = await api(`/v1/videos/${videoId}/analytics${query}`, bearer(key));
  if (response.status !== 200) throw new Error(`analytics: ${response.status} ${await response.text()}`);
  return (await response.json()) as {
    views: number;
    watchTimeSeconds: number;
    startupTimeMs: { p50: number; p95: number } | null;
    rebufferRatio: number;
    errorViews: number;
    renditions: { resolution: string; share: number }[];
    series: { start: string; views: number; watchTimeSeconds: number }[];
  };
}

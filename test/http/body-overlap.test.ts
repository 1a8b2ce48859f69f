import { describe, expect, it } from "vitest";
import { IMAGES } from "../fixtures/images";
import { api, bearer, clientIp, errorCode, json, newVideo, newWorkspace, type Session, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { limiterAround } from "../support/limiter";

type Event = "limiter asked" | "limiter answered" | "body read";

/** A limiter binding that writes down when each call is made and answered. */
function recordingLimiter(events: Event[]): Env["RATE_LIMITER"] {
  return limiterAround(async (call) => {
    events.push("limiter asked");
    const result = await call();
    events.push("limiter answered");
    return result;
  });
}

/** A body without a Content-Length, whose bytes are handed over only when the Worker reads it. */
function recordingBody(bytes: Uint8Array, events: Event[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        events.push("body read");
        controller.enqueue(bytes);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

const encoder = new TextEncoder();
const jsonBytes = (value: unknown) => encoder.encode(JSON.stringify(value));

type Case = {
  name: string;
  call: (ws: Awaited<ReturnType<typeof newWorkspace>>, video: string) => { path: string; init: RequestInit };
  bytes: Uint8Array;
  type: string;
  status: number;
};

const withSession = (session: Session, method: string, type: string) =>
  withCookie(session, { method, headers: { "content-type": type } });
const withKey = (key: string, method: string, type: string) =>
  bearer(key, { method, headers: { "content-type": type } });

const OVERLAPPED: Case[] = [
  {
    name: "PATCH /v1/projects/{projectId}/encoding-settings",
    call: (ws) => ({
      path: `/v1/projects/${ws.project.id}/encoding-settings`,
      init: withSession(ws.session, "PATCH", "application/json"),
    }),
    bytes: jsonBytes({ mp4FallbackEnabled: true }),
    type: "application/json",
    status: 200,
  },
  {
    name: "POST /v1/projects",
    call: (ws) => ({ path: "/v1/projects", init: withSession(ws.session, "POST", "application/json") }),
    bytes: jsonBytes({ name: "overlap" }),
    type: "application/json",
    status: 201,
  },
  {
    name: "POST /v1/videos/bulk",
    call: (ws) => ({ path: "/v1/videos/bulk", init: withKey(ws.key, "POST", "application/json") }),
    bytes: jsonBytes({ action: "set_visibility", videoIds: ["01JD5Q3V7Y8N2M4K6P9R0S1T2V"], visibility: "public" }),
    type: "application/json",
    status: 200,
  },
  {
    name: "PUT /v1/videos/{id}/thumbnail",
    call: (ws, video) => ({ path: `/v1/videos/${video}/thumbnail`, init: withKey(ws.key, "PUT", "image/png") }),
    bytes: IMAGES.rgbPng,
    type: "image/png",
    status: 200,
  },
];

describe("bodies arrive while the rate limiter counts", () => {
  it.each(OVERLAPPED)("$name reads its body before the limiter answers", async ({ call, bytes, status }) => {
    const ws = await newWorkspace();
    const { video } = await newVideo(ws.key);
    const events: Event[] = [];
    const { path, init } = call(ws, video.id);
    const response = await apiWith({ RATE_LIMITER: recordingLimiter(events) }, path, {
      ...init,
      body: recordingBody(bytes, events),
    });
    expect(response.status, await response.clone().text()).toBe(status);
    expect(events).toEqual(["body read", "limiter asked", "limiter answered"]);
  });

  it("reads no body of a caller it has not authenticated", async () => {
    const events: Event[] = [];
    const response = await apiWith({ RATE_LIMITER: recordingLimiter(events) }, "/v1/projects", {
      method: "POST",
      headers: { "content-type": "application/json", cookie: "svc_session=not-a-session" },
      body: recordingBody(jsonBytes({ name: "x" }), events),
    });
    expect(response.status).toBe(401);
    expect(events).toEqual([]);
  });

  it("reads login's body only after the per-address limit passed (the caller is unknown)", async () => {
    const events: Event[] = [];
    const response = await apiWith({ RATE_LIMITER: recordingLimiter(events) }, "/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": clientIp() },
      body: recordingBody(jsonBytes({ email: "nobody@example.com", password: "0123456789" }), events),
    });
    expect(response.status).toBe(401);
    expect(events.slice(0, 3)).toEqual(["limiter asked", "limiter answered", "body read"]);
  });

  it("does not read a body of a type the route refuses", async () => {
    const ws = await newWorkspace();
    const { video } = await newVideo(ws.key);
    const events: Event[] = [];
    const response = await apiWith({ RATE_LIMITER: recordingLimiter(events) }, `/v1/videos/${video.id}/thumbnail`, {
      ...withKey(ws.key, "PUT", "image/gif"),
      body: recordingBody(IMAGES.rgbPng, events),
    });
    expect(response.status).toBe(415);
    expect(events).toEqual(["limiter asked", "limiter answered"]);
  });

  it("answers 429 before any body error once the limit is reached", async () => {
    const ws = await newWorkspace();
    const { video } = await newVideo(ws.key);
    const thumbnail = `/v1/videos/${video.id}/thumbnail`;
    // Refused images and refused JSON count like any other call.
    for (let i = 0; i < 30; i++) {
      const image = await api(thumbnail, { ...withKey(ws.key, "PUT", "image/png"), body: new Uint8Array(8) });
      expect(image.status).toBe(400);
      const bulk = await api("/v1/videos/bulk", bearer(ws.key, json("POST", "{")));
      expect(bulk.status).toBe(400);
    }
    const tooLarge = await api(thumbnail, {
      ...withKey(ws.key, "PUT", "image/png"),
      body: new Uint8Array(5 * 1024 * 1024 + 1),
    });
    expect(tooLarge.status).toBe(429);
    expect(await errorCode(tooLarge)).toBe("rate_limited");
    const notJson = await api("/v1/videos/bulk", bearer(ws.key, json("POST", "{")));
    expect(notJson.status).toBe(429);
    expect(await errorCode(notJson)).toBe("rate_limited");
  });
});

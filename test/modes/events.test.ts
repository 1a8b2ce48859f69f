import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MODES, type Mode } from "../../src/lib/tenant";
import { emptyPool, fakeEncoder, finishAll, playable, probeFacts } from "../encoding/pipeline/support";
import { api, bearer, json, newVideo, withCookie } from "../helpers";
import { twoModes } from "./support";

/**
 * Test mode (docs/api-guide.md#test-mode-and-going-live): events of a test object go only to test
 * endpoints, and a live object's only to live endpoints, whichever credential made the change.
 */

/** The videos whose events reached the endpoint, by event type, read from its attempts. */
async function reached(endpointId: string): Promise<{ type: string; videoId: string; livemode: number }[]> {
  const { results } = await env.DB.prepare(
    `SELECT o.type, o.subject_id AS videoId, o.livemode FROM webhook_deliveries d
     JOIN outbox_events o ON o.id = d.event_id WHERE d.endpoint_id = ? ORDER BY d.id`,
  )
    .bind(endpointId)
    .all<{ type: string; videoId: string; livemode: number }>();
  return results;
}

const isLive = (mode: Mode) => (mode === "live" ? 1 : 0);

describe("events stay in their mode", () => {
  it("video.deleted of each mode's videos reaches that mode's endpoints only", async () => {
    const ws = await twoModes();
    const deleted: Record<Mode, string[]> = { live: [], test: [] };
    for (const mode of MODES) {
      // twoModes deleted one video per mode already; two more, by id and in bulk.
      const [one, two] = [(await newVideo(ws.keys[mode])).video.id, (await newVideo(ws.keys[mode])).video.id];
      expect((await api(`/v1/videos/${one}`, bearer(ws.keys[mode], { method: "DELETE" }))).status).toBe(204);
      const bulk = await api(
        "/v1/videos/bulk",
        bearer(ws.keys[mode], json("POST", { action: "delete", videoIds: [two] })),
      );
      expect(bulk.status).toBe(200);
      deleted[mode].push(one, two);
    }
    for (const mode of MODES) {
      const events = await reached(ws.objects[mode].endpoint);
      expect(events).toHaveLength(3);
      expect(events.every((event) => event.type === "video.deleted" && event.livemode === isLive(mode))).toBe(true);
      expect(events.map((event) => event.videoId)).toEqual(expect.arrayContaining(deleted[mode]));
    }
  });

  it("video.playable and video.ready of each mode's video reach that mode's endpoints only, with its livemode", async () => {
    const ws = await twoModes();
    const encoder = fakeEncoder();
    await emptyPool();
    const ready: Record<Mode, string> = { live: "", test: "" };
    for (const mode of MODES) {
      const { id } = await playable(encoder, ws.keys[mode], probeFacts(6));
      await finishAll(encoder, id);
      ready[mode] = id;
    }
    for (const mode of MODES) {
      for (const type of ["video.playable", "video.ready"]) {
        const events = (await reached(ws.objects[mode].endpoint)).filter((event) => event.type === type);
        expect(
          events.map((event) => event.videoId),
          type,
        ).toEqual([ready[mode]]);
        const payload = await env.DB.prepare("SELECT payload FROM outbox_events WHERE subject_id = ? AND type = ?")
          .bind(ready[mode], type)
          .first<string>("payload");
        expect(JSON.parse(payload ?? "{}").data.livemode, type).toBe(mode === "live");
      }
    }
  });

  it("a session cookie's changes reach the endpoints of the video's mode", async () => {
    const ws = await twoModes();
    for (const mode of MODES) {
      // Created with the cookie (?mode=test for a test one), deleted with the cookie seeing both modes.
      const query = `projectId=${ws.projectId}${mode === "test" ? "&mode=test" : ""}`;
      const created = await api(`/v1/videos?${query}`, withCookie(ws.session, json("POST", {})));
      const { video } = (await created.json()) as { video: { id: string } };
      const gone = await api(
        `/v1/videos/${video.id}?projectId=${ws.projectId}`,
        withCookie(ws.session, { method: "DELETE" }),
      );
      expect(gone.status).toBe(204);
      expect((await reached(ws.objects[mode].endpoint)).map((event) => event.videoId)).toContain(video.id);
      expect(
        (await reached(ws.objects[mode === "live" ? "test" : "live"].endpoint)).map((e) => e.videoId),
      ).not.toContain(video.id);
    }
  });
});

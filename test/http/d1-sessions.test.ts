import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, bearer, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

describe("D1 sessions and x-d1-bookmark", () => {
  it("returns the bookmark on every /v1 answer that touched D1, and none on one that did not", async () => {
    const { key } = await newWorkspace();
    const read = await api("/v1/videos", bearer(key));
    expect(read.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    const write = await api("/v1/videos", bearer(key, json("POST", {})));
    expect(write.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    const unauthorized = await api("/v1/videos", bearer("svc_test_nope"));
    expect(unauthorized.status).toBe(401);
    expect((await api("/v1/openapi.json")).headers.get("x-d1-bookmark")).toBeNull();
  });

  it("starts writes at the primary and reads anywhere, or at a bookmark the client sends back", async () => {
    const { key } = await newWorkspace();
    const db = new InstrumentedD1(env.DB);
    const created = await apiWith({ DB: db.binding }, "/v1/videos", bearer(key, json("POST", {})));
    const bookmark = created.headers.get("x-d1-bookmark") ?? "";
    const { video } = (await created.json()) as { video: { id: string } };
    const read = await apiWith(
      { DB: db.binding },
      `/v1/videos/${video.id}`,
      bearer(key, { headers: { "x-d1-bookmark": bookmark } }),
    );
    // Read-your-writes: the read starts at the write's bookmark and sees the video.
    expect(read.status).toBe(200);
    await apiWith({ DB: db.binding }, "/v1/videos", bearer(key));
    // A write starts at the primary even when a bookmark is sent.
    await apiWith({ DB: db.binding }, "/v1/videos", bearer(key, json("POST", {}, { "x-d1-bookmark": bookmark })));
    expect(db.sessions).toEqual(["first-primary", bookmark, "first-unconstrained", "first-primary"]);
    expect((read.headers.get("x-d1-bookmark") ?? "") >= bookmark).toBe(true);
  });

  it("starts the encoder's reads and the playback state it remembers at the primary", async () => {
    const db = new InstrumentedD1(env.DB);
    await apiWith({ DB: db.binding }, "/internal/encoding/01JD6Q2V4Y9T3KX8M1N5P7R2S4/1/source", {
      headers: { authorization: "Bearer not-a-token-of-this-attempt" },
    });
    await apiWith({ DB: db.binding }, "/play/01JD6Q2V4Y9T3KX8M1N5P7R2S4/360p/seg_00000.ts");
    // A playback's files read the video's state at the primary, since that state is remembered for
    // 5 s (docs/playback-at-scale.md) and a lagging replica must not be remembered right after a
    // write forgot it; the master playlist then reads the state remembered: no D1 read of its own.
    await apiWith({ DB: db.binding }, "/play/01JD6Q2V4Y9T3KX8M1N5P7R2S4/master.m3u8");
    expect(db.sessions).toEqual(["first-primary", "first-unconstrained", "first-primary", "first-unconstrained"]);
  });

  it.each(["garbage", "", "0000", "x".repeat(5000), "00000000-0000000f-00000000-0000000000000000000000000000000g"])(
    "ignores a malformed bookmark (%s)",
    async (bad) => {
      const { key } = await newWorkspace();
      const { video } = await newVideo(key);
      const db = new InstrumentedD1(env.DB);
      const response = await apiWith(
        { DB: db.binding },
        `/v1/videos/${video.id}`,
        bearer(key, { headers: { "x-d1-bookmark": bad } }),
      );
      expect(response.status).toBe(200);
      expect(db.sessions).toEqual(["first-unconstrained"]);
    },
  );
});

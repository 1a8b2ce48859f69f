import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { frameAt } from "../../media-plan/pictures.mjs";
import { topRendition } from "../../media-plan/plan.mjs";
import { parsePlan } from "../../media-plan/protocol.mjs";
import { normalizeOriginPattern, originAllowed, requestOrigin } from "../../src/lib/origins";
import { encodeOutputKey, frameKey } from "../../src/lib/storage-keys";
import { mintPlaybackToken, readPlaybackToken } from "../../src/playback/tokens";
import { finishAll, playable, probeFacts, withFakeEncoder } from "../encoding/pipeline/support";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";

const SECRET = "test-playback-secret-0123456789abcdef01";
const KEYS = { current: SECRET, previous: null };
const VIDEO_ID = "01JD6Q2V4Y9T3KX8M1N5P7R2S4";

describe("origin patterns and the origin check (pure)", () => {
  it.each([
    ["https://example.com", "https://example.com"],
    ["HTTPS://Example.COM", "https://example.com"],
    ["https://*.example.com", "https://*.example.com"],
    ["http://localhost:8080", "http://localhost:8080"],
    ["https://example.com:443", "https://example.com"],
    ["https://example.com/", null],
    ["https://example.com/path", null],
    ["example.com", null],
    ["ftp://example.com", null],
    ["https://a.*.example.com", null],
    ["https://*example.com", null],
    ["https://*", null],
    ["https://user@example.com", null],
    ["https://example.com:99999", null],
  ])("%s → %s", (pattern, normal) => {
    expect(normalizeOriginPattern(pattern)).toBe(normal);
  });

  const headers = (init: Record<string, string>) => new Headers(init);
  const list = ["https://example.com", "https://*.example.org"];

  it("allows any origin with an empty list, and a request naming no origin whatever the list", () => {
    expect(originAllowed([], headers({ origin: "https://evil.test" }))).toBe(true);
    expect(originAllowed(list, headers({}))).toBe(true);
  });

  it("takes Origin, else Referer's origin", () => {
    expect(originAllowed(list, headers({ origin: "https://example.com" }))).toBe(true);
    expect(originAllowed(list, headers({ referer: "https://example.com/page?x=1" }))).toBe(true);
    expect(originAllowed(list, headers({ origin: "https://evil.test", referer: "https://example.com/" }))).toBe(false);
    expect(originAllowed(list, headers({ referer: "https://evil.test/page" }))).toBe(false);
    expect(requestOrigin(headers({ referer: "not a url" }))).toBe("null");
    expect(originAllowed(list, headers({ origin: "null" }))).toBe(false);
  });

  it("matches scheme, host and port exactly, and *. as any subdomain", () => {
    expect(originAllowed(list, headers({ origin: "http://example.com" }))).toBe(false);
    expect(originAllowed(list, headers({ origin: "https://example.com:8443" }))).toBe(false);
    expect(originAllowed(list, headers({ origin: "https://www.example.com" }))).toBe(false);
    expect(originAllowed(list, headers({ origin: "https://a.example.org" }))).toBe(true);
    expect(originAllowed(list, headers({ origin: "https://a.b.example.org" }))).toBe(true);
    expect(originAllowed(list, headers({ origin: "https://example.org" }))).toBe(false);
    expect(originAllowed(list, headers({ origin: "https://evilexample.org" }))).toBe(false);
    expect(originAllowed(list, headers({ origin: "https://own.test" }), "https://own.test")).toBe(true);
  });
});

describe("tokens with claims", () => {
  it("bind origins and a range, and refuse an altered claim", async () => {
    const expiry = Math.floor(Date.now() / 1000) + 600;
    const token = await mintPlaybackToken(SECRET, VIDEO_ID, expiry, {
      allowedOrigins: ["https://a.test"],
      start: 2,
      end: 5,
    });
    expect(await readPlaybackToken(KEYS, token, Date.now())).toEqual({
      videoId: VIDEO_ID,
      allowedOrigins: ["https://a.test"],
      start: 2,
      end: 5,
    });
    const [id, exp, claims, signature] = token.split(".") as [string, string, string, string];
    const widened = Buffer.from(JSON.stringify({ s: 0, e: 100 })).toString("base64url");
    expect(await readPlaybackToken(KEYS, `${id}.${exp}.${widened}.${signature}`, Date.now())).toBeNull();
    expect(await readPlaybackToken(KEYS, `${id}.${exp}.${signature}`, Date.now())).toBeNull();
    expect(claims.length).toBeGreaterThan(0);
  });
});

describe("allowed origins and clips over HTTP", () => {
  const encoder = withFakeEncoder();

  /** A ready video of 360p, 20 s long (five 4 s segments), with an MP4. */
  async function readyVideo(seconds = 20) {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: true })),
    );
    const { id } = await playable(encoder(), key, probeFacts(seconds));
    await finishAll(encoder(), id, { mp4: new Uint8Array(100) });
    return { key, id };
  }

  const restrict = (key: string, id: string, allowedOrigins: string[]) =>
    api(`/v1/videos/${id}`, bearer(key, json("PATCH", { allowedOrigins })));

  it("answers 403 origin_not_allowed on /play/ and /embed/ to an origin the video does not allow", async () => {
    const { key, id } = await readyVideo(6);
    const edited = await restrict(key, id, ["https://Example.com", "https://*.example.org"]);
    expect(await edited.json()).toMatchObject({ allowedOrigins: ["https://example.com", "https://*.example.org"] });
    for (const path of [
      `/play/${id}/master.m3u8`,
      `/play/${id}/360p/index.m3u8`,
      `/play/${id}/360p/seg_00000.ts`,
      `/play/${id}/video.mp4`,
      `/play/${id}/thumbnail`,
      `/embed/${id}`,
    ]) {
      const refused = await api(path, { headers: { origin: "https://evil.test" } });
      expect(refused.status, path).toBe(403);
      if (path.startsWith("/play/")) {
        expect(await errorCode(refused)).toBe("origin_not_allowed");
        expect(refused.headers.get("access-control-allow-origin")).toBe("*");
      } else {
        expect(await refused.text()).toContain("origin_not_allowed");
      }
      const byReferer = await api(path, { headers: { referer: "https://evil.test/watch" } });
      expect(byReferer.status, path).toBe(403);
      const allowedHeaders: Record<string, string>[] = [
        { origin: "https://example.com" },
        { referer: "https://cdn.example.org/p" },
        {},
      ];
      for (const allowed of allowedHeaders) {
        const ok = await api(path, { headers: allowed });
        expect(ok.status, `${path} ${JSON.stringify(allowed)}`).toBe(200);
        await ok.arrayBuffer();
      }
    }
    // The service's own pages (the embed page's player) always play.
    expect((await api(`/play/${id}/master.m3u8`, { headers: { origin: "http://api.test" } })).status).toBe(200);
  });

  it("frames the embed page only from allowed origins (frame-ancestors), and lifts the rule with []", async () => {
    const { key, id } = await readyVideo(6);
    const open = await api(`/embed/${id}`);
    expect(open.headers.get("content-security-policy")).toBeNull();
    await restrict(key, id, ["https://example.com", "https://*.example.org"]);
    const page = await api(`/embed/${id}`);
    // The service's own origin frames it too: the dashboard shows every video's player.
    expect(page.headers.get("content-security-policy")).toBe(
      "frame-ancestors http://api.test https://example.com https://*.example.org",
    );
    await restrict(key, id, []);
    expect((await api(`/play/${id}/master.m3u8`, { headers: { origin: "https://evil.test" } })).status).toBe(200);
  });

  it("lets the dashboard frame and play a video whose allowedOrigins leave its origin out", async () => {
    const { key, id } = await readyVideo(6);
    await restrict(key, id, ["https://customer.example"]);
    // The dashboard's iframe: its request carries the dashboard page as Referer.
    const framed = await api(`/embed/${id}`, {
      headers: { referer: `http://api.test/dashboard/projects/x/videos/${id}` },
    });
    expect(framed.status).toBe(200);
    expect(framed.headers.get("content-security-policy")).toBe(
      "frame-ancestors http://api.test https://customer.example",
    );
    // The player's own requests come from the embed page, on the service's origin.
    const embedPage = { referer: `http://api.test/embed/${id}` };
    expect((await api(`/play/${id}/master.m3u8`, { headers: embedPage })).status).toBe(200);
    // Where PUBLIC_BASE_URL names the service, that origin is its own.
    const base = { PUBLIC_BASE_URL: "https://videos.example" };
    const behind = await apiWith(base, `/embed/${id}`, { headers: { referer: "https://videos.example/dashboard" } });
    expect(behind.status).toBe(200);
    expect(behind.headers.get("content-security-policy")).toBe(
      "frame-ancestors https://videos.example https://customer.example",
    );
    const stranger = await apiWith(base, `/embed/${id}`, { headers: { referer: "https://evil.test/" } });
    expect(stranger.status).toBe(403);
  });

  it("refuses bad allowedOrigins with invalid_body", async () => {
    const { key, id } = await readyVideo(6);
    for (const allowedOrigins of [
      ["https://example.com/x"],
      ["*"],
      Array.from({ length: 11 }, (_, i) => `https://a${i}.test`),
      "https://a.test",
    ]) {
      const response = await restrict(key, id, allowedOrigins as string[]);
      expect(await errorCode(response), JSON.stringify(allowedOrigins)).toBe("invalid_body");
    }
    const created = await api("/v1/videos", bearer(key, json("POST", { allowedOrigins: ["https://*.*.test"] })));
    expect(await errorCode(created)).toBe("invalid_body");
  });

  it("applies a token's own allowed origins beside the video's", async () => {
    const { key, id } = await readyVideo(6);
    const minted = await api(
      `/v1/videos/${id}/playback-tokens`,
      bearer(key, json("POST", { allowedOrigins: ["https://partner.test"] })),
    );
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    const at = (origin: string) => api(`/play/${token}/master.m3u8`, { headers: { origin } });
    expect((await at("https://partner.test")).status).toBe(200);
    expect(await errorCode(await at("https://other.test"))).toBe("origin_not_allowed");
    const embed = await api(`/embed/${token}`);
    expect(embed.headers.get("content-security-policy")).toBe("frame-ancestors http://api.test https://partner.test");
    // The video's own list applies too: both must allow.
    await restrict(key, id, ["https://site.test"]);
    expect(await errorCode(await at("https://partner.test"))).toBe("origin_not_allowed");
    expect((await api(`/embed/${token}`)).headers.get("content-security-policy")).toBe(
      "frame-ancestors http://api.test https://site.test, frame-ancestors http://api.test https://partner.test",
    );
    expect((await api(`/play/${id}/master.m3u8`, { headers: { origin: "https://site.test" } })).status).toBe(200);
  });

  const segmentsOf = (playlist: string) => playlist.split("\n").filter((line) => line.endsWith(".ts"));
  const durationOf = (playlist: string) =>
    playlist
      .split("\n")
      .filter((line) => line.startsWith("#EXTINF:"))
      .reduce((sum, line) => sum + Number.parseFloat(line.slice(8)), 0);

  it("cuts the master playlist to the segments covering ?start=&end=, its variants carrying the range", async () => {
    const { id } = await readyVideo(20);
    const master = await (await api(`/play/${id}/master.m3u8?start=5&end=11.5`)).text();
    expect(master).toContain("360p/index.m3u8?start=5&end=11.5");
    const variant = await (await api(`/play/${id}/360p/index.m3u8?start=5&end=11.5`)).text();
    expect(segmentsOf(variant)).toEqual(["seg_00001.ts", "seg_00002.ts"]);
    expect(variant).toContain("#EXT-X-MEDIA-SEQUENCE:1");
    expect(variant).toContain("#EXT-X-ENDLIST");
    expect(Math.abs(durationOf(variant) - 6.5)).toBeLessThanOrEqual(4);
    // Either end may be left out.
    expect(segmentsOf(await (await api(`/play/${id}/360p/index.m3u8?start=12`)).text())).toEqual([
      "seg_00003.ts",
      "seg_00004.ts",
    ]);
    expect(segmentsOf(await (await api(`/play/${id}/360p/index.m3u8?end=4`)).text())).toEqual(["seg_00000.ts"]);
    // Without a range: the whole video, as before.
    expect(await (await api(`/play/${id}/master.m3u8`)).text()).not.toContain("?start");
    expect(segmentsOf(await (await api(`/play/${id}/360p/index.m3u8`)).text())).toHaveLength(5);
  });

  it.each([
    "start=-1",
    "start=abc",
    "start=5&end=5",
    "start=6&end=5",
    "end=20.5",
    "start=20",
    "start=1&start=2",
    "end=",
    "start=1e1",
  ])("refuses ?%s with 400 invalid_query", async (query) => {
    const { id } = await readyVideo(20);
    for (const path of ["master.m3u8", "360p/index.m3u8"]) {
      const response = await api(`/play/${id}/${path}?${query}`);
      expect(response.status, path).toBe(400);
      expect(await errorCode(response)).toBe("invalid_query");
    }
  });

  it("binds a range in a token, which the query narrows but never widens", async () => {
    const { key, id } = await readyVideo(20);
    const mint = (body: unknown) => api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", body)));
    const minted = await mint({ start: 4, end: 12 });
    expect(minted.status).toBe(201);
    const { token, mp4 } = (await minted.json()) as { token: string; mp4: string | null };
    expect(mp4).toBeNull();
    const variant = await (await api(`/play/${token}/360p/index.m3u8`)).text();
    expect(segmentsOf(variant)).toEqual(["seg_00001.ts", "seg_00002.ts"]);
    expect(segmentsOf(await (await api(`/play/${token}/360p/index.m3u8?start=8`)).text())).toEqual(["seg_00002.ts"]);
    for (const query of ["start=0", "end=20", "start=2&end=6"]) {
      expect(await errorCode(await api(`/play/${token}/master.m3u8?${query}`)), query).toBe("invalid_query");
    }
    // Its segments only, and no whole-video file.
    expect((await api(`/play/${token}/360p/seg_00001.ts`)).status).toBe(200);
    for (const path of ["360p/seg_00000.ts", "360p/seg_00003.ts", "video.mp4"]) {
      expect((await api(`/play/${token}/${path}`)).status, path).toBe(404);
    }
    for (const body of [{ start: 5, end: 5 }, { start: -1 }, { end: 21 }, { start: 20 }, { start: "1" }]) {
      expect(await errorCode(await mint(body)), JSON.stringify(body)).toBe("invalid_body");
    }
  });

  /** A ranged token of the video, minted through the API. */
  async function rangedToken(key: string, id: string, range: { start?: number; end?: number }) {
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", range)));
    expect(minted.status).toBe(201);
    return ((await minted.json()) as { token: string }).token;
  }

  /** Stores the frame at each time (at the default width) as the coordinator would, its text saying which. */
  async function storeFrames(id: string, times: number[]) {
    const row = await env.DB.prepare("SELECT project_id, encode_plan FROM videos WHERE id = ?")
      .bind(id)
      .first<{ project_id: string; encode_plan: string }>();
    const plan = parsePlan(JSON.parse(row?.encode_plan as string));
    for (const time of times) {
      const key = frameKey(row?.project_id as string, id, frameAt(plan, time), topRendition(plan).width);
      await env.MEDIA.put(key, `frame at ${time} s`);
    }
  }

  it("refuses a frame outside a ranged token's range, and stands the range's poster for the video's", async () => {
    const { key, id } = await readyVideo(20);
    await storeFrames(id, [0, 1, 8, 9, 10, 12, 17, 18]);
    const token = await rangedToken(key, id, { start: 8, end: 12 });
    const frame = (subject: string, query: string) => api(`/play/${subject}/thumbnail${query}`);
    for (const time of ["0", "7.9", "12.1", "18"]) {
      const refused = await frame(token, `?time=${time}`);
      expect([time, refused.status, await errorCode(refused)]).toEqual([time, 403, "invalid_playback_token"]);
      expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    }
    for (const time of ["8", "10", "12"]) {
      const served = await frame(token, `?time=${time}`);
      expect([time, served.status, await served.text()]).toEqual([time, 200, `frame at ${time} s`]);
    }
    // A malformed time is still 400, and the video's id still reaches every frame.
    expect(await errorCode(await frame(token, "?time=abc"))).toBe("invalid_query");
    expect(await (await frame(id, "?time=0")).text()).toBe("frame at 0 s");
    // The thumbnail: the frame as far into the range as the poster is into a video (1 s), not the
    // poster 1 s into the video; a token with only a start runs to the video's end.
    expect(await (await frame(token, "")).text()).toBe("frame at 9 s");
    expect(await (await frame(await rangedToken(key, id, { start: 16 }), "")).text()).toBe("frame at 17 s");
    expect(await errorCode(await frame(await rangedToken(key, id, { end: 8 }), "?time=9"))).toBe(
      "invalid_playback_token",
    );
    // A custom thumbnail is the owner's picture of the video, no moment of it: served as it is.
    const custom = await api(
      `/v1/videos/${id}/thumbnail`,
      bearer(key, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
    );
    expect(custom.status).toBe(200);
    const pictured = await frame(token, "");
    expect([pictured.status, pictured.headers.get("content-type")]).toEqual([200, "image/png"]);
  });

  it("serves none of the whole-video files under a ranged token, and its embed page names no storyboard", async () => {
    const { key, id } = await readyVideo(20);
    const token = await rangedToken(key, id, { start: 8, end: 12 });
    for (const path of ["video.mp4", "storyboard.vtt", "storyboard.jpg", "audio.m4a"]) {
      const refused = await api(`/play/${token}/${path}`);
      expect([path, refused.status, await errorCode(refused)]).toEqual([path, 404, "not_found"]);
    }
    expect((await api(`/play/${id}/storyboard.vtt`)).status).toBe(200);
    expect(await (await api(`/embed/${id}`)).text()).toContain("storyboard.vtt");
    const page = await api(`/embed/${token}`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain("storyboard.vtt");
  });

  it("plays none of a video encoded before plans under a ranged token", async () => {
    const { key, id } = await readyVideo(20);
    const row = await env.DB.prepare("SELECT project_id FROM videos WHERE id = ?")
      .bind(id)
      .first<{ project_id: string }>();
    const projectId = row?.project_id as string;
    // As the videos of the first encoder left it: its files under its attempt's folder, no plan.
    await env.DB.prepare("UPDATE videos SET encode_plan = NULL, output_attempt = 1 WHERE id = ?").bind(id).run();
    for (const file of ["master.m3u8", "360p/index.m3u8", "360p/seg_000.ts"]) {
      await env.MEDIA.put(encodeOutputKey(projectId, id, 1, file), `legacy ${file}`);
    }
    const token = await rangedToken(key, id, { start: 8, end: 12 });
    const whole = await rangedToken(key, id, {});
    for (const file of ["360p/index.m3u8", "360p/seg_000.ts"]) {
      expect(await (await api(`/play/${whole}/${file}`)).text()).toBe(`legacy ${file}`);
      const refused = await api(`/play/${token}/${file}`);
      expect([file, refused.status, await errorCode(refused)]).toEqual([file, 404, "not_found"]);
    }
    expect(await errorCode(await api(`/play/${token}/master.m3u8`))).toBe("invalid_query");
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseRange } from "../../src/http/range";
import { stripMetadata } from "../../src/images/strip";
import { posterKey } from "../../src/lib/storage-keys";
import { mintPlaybackToken, verifyPlaybackToken } from "../../src/playback/tokens";
import { finishAll, playable, probeFacts, uploadedVideo, withFakeEncoder } from "../encoding/pipeline/support";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";

const SECRET = "test-playback-secret-0123456789abcdef01";
const KEYS = { current: SECRET, previous: null };
const VIDEO_ID = "01JD6Q2V4Y9T3KX8M1N5P7R2S4";

describe("Range parsing (RFC 9110 §14)", () => {
  it.each([
    ["bytes=0-99", 1000, { offset: 0, length: 100 }],
    ["bytes=900-", 1000, { offset: 900, length: 100 }],
    ["bytes=-100", 1000, { offset: 900, length: 100 }],
    ["bytes=-5000", 1000, { offset: 0, length: 1000 }],
    ["bytes=990-2000", 1000, { offset: 990, length: 10 }],
    ["bytes=999-999", 1000, { offset: 999, length: 1 }],
    ["BYTES=0-0", 1000, { offset: 0, length: 1 }],
    ["bytes=1000-", 1000, "unsatisfiable"],
    ["bytes=5000-6000", 1000, "unsatisfiable"],
    ["bytes=-0", 1000, "unsatisfiable"],
    ["bytes=99999999999999999999-", 1000, "unsatisfiable"],
    ["bytes=0-99999999999999999999", 1000, { offset: 0, length: 1000 }],
    ["bytes=-99999999999999999999", 1000, { offset: 0, length: 1000 }],
    ["bytes=0-", 0, "unsatisfiable"],
    [undefined, 1000, null],
    ["bytes=5-1", 1000, null],
    ["bytes=0-1,5-6", 1000, null],
    ["items=0-1", 1000, null],
    ["bytes=-", 1000, null],
    ["bytes=abc", 1000, null],
  ] as const)("%s of %i bytes", (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

describe("playback tokens", () => {
  const now = Date.parse("2026-11-23T12:00:00Z");
  const expiry = now / 1000 + 3600;

  it("verifies a token it made, for its video, until it expires", async () => {
    const token = await mintPlaybackToken(SECRET, VIDEO_ID, expiry);
    expect(token).toMatch(/^[0-9A-Z]{26}\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(await verifyPlaybackToken(KEYS, token, now)).toBe(VIDEO_ID);
    expect(await verifyPlaybackToken(KEYS, token, expiry * 1000 - 1)).toBe(VIDEO_ID);
    expect(await verifyPlaybackToken(KEYS, token, expiry * 1000)).toBeNull();
  });

  it("refuses an altered token, another secret's, and anything else", async () => {
    const token = await mintPlaybackToken(SECRET, VIDEO_ID, expiry);
    const [id, exp, signature] = token.split(".") as [string, string, string];
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`;
    for (const altered of [
      `${id}.${Number(exp) + 1}.${signature}`,
      `01JD6Q2V4Y9T3KX8M1N5P7R2S5.${exp}.${signature}`,
      `${id}.${exp}.${flipped}`,
      await mintPlaybackToken("another-secret-of-enough-length-0123456789", VIDEO_ID, expiry),
      "",
      "not-a-token",
      `${token}.x`,
    ]) {
      expect(await verifyPlaybackToken(KEYS, altered, now)).toBeNull();
    }
  });
});

describe("playback over HTTP", () => {
  const encoder = withFakeEncoder();

  const MP4 = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
  const M4A = Uint8Array.from({ length: 700 }, (_, i) => (i * 7) % 256);

  /** A ready video of 360p (with an MP4 of 1000 bytes when asked), and its key. */
  async function readyVideo(options: { mp4?: boolean; visibility?: string } = {}) {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: Boolean(options.mp4) })),
    );
    const { id } = await playable(encoder(), key, probeFacts(6));
    if (options.visibility) {
      await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: options.visibility })));
    }
    await finishAll(encoder(), id, { mp4: MP4, m4a: M4A });
    return { key, id };
  }

  it("serves the playlists, segments and MP4 with their types, CORS *, ETag and no-cache", async () => {
    const { id } = await readyVideo({ mp4: true });
    for (const [path, type] of [
      ["master.m3u8", "application/vnd.apple.mpegurl"],
      ["360p/index.m3u8", "application/vnd.apple.mpegurl"],
      ["360p/seg_00000.ts", "video/mp2t"],
      ["video.mp4", "video/mp4"],
    ]) {
      const response = await api(`/play/${id}/${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe(type);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("accept-ranges")).toBe("bytes");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      const etag = response.headers.get("etag") as string;
      await response.arrayBuffer();
      const again = await api(`/play/${id}/${path}`, { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
      const changed = await api(`/play/${id}/${path}`, { headers: { "if-match": '"another"' } });
      expect(changed.status).toBe(412);
      expect(await errorCode(changed)).toBe("precondition_failed");
    }
    const preflight = await api(`/play/${id}/video.mp4`, {
      method: "OPTIONS",
      headers: { origin: "https://elsewhere.example", "access-control-request-headers": "range" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Range");
  });

  it("answers MP4 ranges with 206 and Content-Range, 416 past the end", async () => {
    const { id } = await readyVideo({ mp4: true });
    for (const [range, from, to] of [
      ["bytes=0-99", 0, 99],
      ["bytes=900-", 900, 999],
      ["bytes=-10", 990, 999],
      ["bytes=995-5000", 995, 999],
    ] as const) {
      const response = await api(`/play/${id}/video.mp4`, { headers: { range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get("content-range")).toBe(`bytes ${from}-${to}/1000`);
      expect(response.headers.get("content-length")).toBe(String(to - from + 1));
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(MP4.slice(from, to + 1));
    }
    for (const range of ["bytes=1000-", "bytes=2000-3000"]) {
      const response = await api(`/play/${id}/video.mp4`, { headers: { range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get("content-range")).toBe("bytes */1000");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(await errorCode(response)).toBe("range_not_satisfiable");
    }
    const whole = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=0-1,4-5" } });
    expect(whole.status).toBe(200);
  });

  it("serves the M4A: audio/mp4, HEAD, 206 ranges, 416 past the end, under a token too", async () => {
    const { id, key } = await readyVideo();
    const whole = await api(`/play/${id}/audio.m4a`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("audio/mp4");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("access-control-allow-origin")).toBe("*");
    expect(whole.headers.get("content-length")).toBe("700");
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(M4A);
    const head = await api(`/play/${id}/audio.m4a`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("700");
    expect(head.headers.get("content-type")).toBe("audio/mp4");
    expect(await head.text()).toBe("");
    for (const [range, from, to] of [
      ["bytes=0-99", 0, 99],
      ["bytes=600-", 600, 699],
      ["bytes=-10", 690, 699],
    ] as const) {
      const response = await api(`/play/${id}/audio.m4a`, { headers: { range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get("content-range")).toBe(`bytes ${from}-${to}/700`);
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(M4A.slice(from, to + 1));
    }
    for (const range of ["bytes=700-", "bytes=99999999999999999999-"]) {
      const response = await api(`/play/${id}/audio.m4a`, { headers: { range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get("content-range")).toBe("bytes */700");
      expect(await errorCode(response)).toBe("range_not_satisfiable");
    }
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", {})));
    const token = (await minted.json()) as { token: string; m4a: string | null; mp4: string | null };
    expect(token.m4a).toBe(`http://api.test/play/${token.token}/audio.m4a`);
    expect(token.mp4).toBeNull();
    const byToken = await api(`/play/${token.token}/audio.m4a`, { headers: { range: "bytes=0-9" } });
    expect(byToken.status).toBe(206);
    expect(new Uint8Array(await byToken.arrayBuffer())).toEqual(M4A.slice(0, 10));
    // A token bound to a range plays its segments, and no whole file.
    const bound = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", { start: 1, end: 3 })));
    const clip = (await bound.json()) as { token: string; m4a: string | null };
    expect(clip.m4a).toBeNull();
    expect((await api(`/play/${clip.token}/audio.m4a`)).status).toBe(404);
  });

  it("answers 404 for the M4A before the video is ready, while it plays", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(6));
    const video = (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as {
      status: string;
      playback: { m4a: string | null };
    };
    expect(video.status).toBe("processing");
    expect(video.playback.m4a).toBeNull();
    for (const method of ["GET", "HEAD"]) {
      const response = await api(`/play/${id}/audio.m4a`, { method });
      expect(response.status, method).toBe(404);
    }
  });

  it("answers 404 not_found for an unknown video, a file it does not have, and a video not ready", async () => {
    const { id } = await readyVideo();
    const { key } = await newWorkspace();
    const waiting = await uploadedVideo(key);
    for (const path of [
      `/play/01JD6Q2V4Y9T3KX8M1N5P7R2S4/master.m3u8`,
      `/play/${id}/video.mp4`,
      `/play/${id}/1080p/index.m3u8`,
      `/play/${id}/source`,
      `/play/${waiting.id}/master.m3u8`,
    ]) {
      const response = await api(path);
      expect(response.status, path).toBe(404);
      expect(await errorCode(response)).toBe("not_found");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("keeps private videos private: id URLs 403, a token plays them, an altered one is refused", async () => {
    const { id, key } = await readyVideo({ visibility: "private", mp4: true });
    // Before the other checks: any file, even one the video does not have.
    for (const path of ["master.m3u8", "360p/seg_00000.ts", "x.txt", "nothing/here"]) {
      const byId = await api(`/play/${id}/${path}`);
      expect(byId.status, path).toBe(403);
      expect(await errorCode(byId)).toBe("playback_token_required");
    }
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", { expiresIn: 60 })));
    expect(minted.status).toBe(201);
    const token = (await minted.json()) as { token: string; expiresAt: string; hls: string; mp4: string };
    expect(token.hls).toBe(`http://api.test/play/${token.token}/master.m3u8`);
    expect(token.mp4).toBe(`http://api.test/play/${token.token}/video.mp4`);
    expect(Date.parse(token.expiresAt) - Date.now()).toBeGreaterThan(55_000);
    const master = await api(`/play/${token.token}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(await master.text()).toContain("#EXT-X-STREAM-INF:BANDWIDTH=");
    // The playlists' relative URIs resolve under the token too.
    expect((await api(`/play/${token.token}/360p/index.m3u8`)).status).toBe(200);
    const altered = await api(`/play/${token.token.slice(0, -2)}xx/master.m3u8`);
    expect(altered.status).toBe(403);
    expect(await errorCode(altered)).toBe("invalid_playback_token");
    // Public again: the id URLs play at once.
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "public" })));
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(200);
    // Private again: at once too, the token still plays.
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(403);
    expect((await api(`/play/${token.token}/master.m3u8`)).status).toBe(200);
  });

  it("orders its checks: private before not ready, deleted 404 whatever it was", async () => {
    const { key } = await newWorkspace();
    const waiting = await uploadedVideo(key);
    await api(`/v1/videos/${waiting.id}`, bearer(key, json("PATCH", { visibility: "private" })));
    const early = await api(`/play/${waiting.id}/master.m3u8`);
    expect(early.status).toBe(403);
    expect(await errorCode(early)).toBe("playback_token_required");
    const token = await mintPlaybackToken(SECRET, waiting.id, Math.floor(Date.now() / 1000) + 600);
    expect(await errorCode(await api(`/play/${token}/master.m3u8`))).toBe("not_found");
    expect((await api(`/embed/${token}`)).status).toBe(404);
    const { id } = await readyVideo({ visibility: "private" });
    await api(`/v1/videos/${waiting.id}`, bearer(key, { method: "DELETE" }));
    // Deleted while private: 404, not 403.
    const response = await api(`/play/${waiting.id}/master.m3u8`);
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("not_found");
    expect((await api(`/embed/${waiting.id}`)).status).toBe(404);
    // A ready private one stays 403 by id.
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(403);
  });

  it("answers malformed playback and call-back requests with a 4xx, never a 500", async () => {
    const { id } = await readyVideo({ mp4: true });
    const paths = [
      `/play/${id}/%E0%A4`,
      `/play/${id}/%2e%2e/source`,
      `/play/${id}/${"a/".repeat(40)}x.ts`,
      `/play/${"x".repeat(5000)}/master.m3u8`,
      `/play/${id}.1.${"A".repeat(43)}/master.m3u8`,
      "/play/%00/master.m3u8",
      "/embed/%E0%A4",
      `/embed/${"x".repeat(5000)}`,
      `/internal/encoding/${id}/1/source`,
      `/internal/encoding/${id}/x/heartbeat`,
      "/internal/encoding/nope/1/result",
    ];
    for (const path of paths) {
      const response = await api(path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
    }
    for (const range of [
      "bytes=",
      "bytes=-",
      "bytes=abc-def",
      "bytes=99999999999999999999-",
      "bytes=5-1",
      "bytes=0-0,1-1",
      "x",
    ]) {
      const response = await api(`/play/${id}/video.mp4`, { headers: { range } });
      expect(response.status, range).toBeLessThan(500);
    }
    for (const header of ['"', "W/", "*, *", 'W/"x", garbage']) {
      const response = await api(`/play/${id}/master.m3u8`, {
        headers: { "if-none-match": header, "if-match": header },
      });
      expect(response.status, header).toBeLessThan(500);
    }
  });

  it("an expired token is refused, and a deleted video's token URLs answer 404", async () => {
    const { id, key } = await readyVideo();
    const expired = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) - 1);
    const refused = await api(`/play/${expired}/master.m3u8`);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("invalid_playback_token");
    const live = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) + 600);
    await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    expect((await api(`/play/${live}/master.m3u8`)).status).toBe(404);
  });

  it("mints tokens only for the caller's videos, with expiresIn 60 to 86400", async () => {
    const { id, key } = await readyVideo();
    for (const body of [{ expiresIn: 59 }, { expiresIn: 86_401 }, { expiresIn: 1.5 }, { other: 1 }, "nope"]) {
      const response = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", body)));
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await errorCode(response)).toBe("invalid_body");
    }
    const defaults = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", {})));
    expect(defaults.status).toBe(201);
    const { expiresAt, mp4 } = (await defaults.json()) as { expiresAt: string; mp4: string | null };
    expect(Math.round((Date.parse(expiresAt) - Date.now()) / 1000)).toBeGreaterThan(3590);
    expect(mp4).toBeNull();
    const other = await newWorkspace();
    const foreign = await api(`/v1/videos/${id}/playback-tokens`, bearer(other.key, json("POST", {})));
    expect(foreign.status).toBe(404);
    expect(await errorCode(foreign)).toBe("video_not_found");
  });

  it("the embed page plays with the Worker's own player and answers as /play/ does, as HTML", async () => {
    const { id, key } = await readyVideo();
    const page = await api(`/embed/${id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain('<script src="/vendor/player/player.js"></script>');
    expect(html).toContain(`<hls-video slot="media" src="http://api.test/play/${id}/master.m3u8"`);
    expect(html).toContain(`<media-poster-image slot="poster" src="http://api.test/play/${id}/thumbnail">`);
    expect(html).not.toMatch(/https?:\/\/(?!api\.test)/);
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    const refused = await api(`/embed/${id}`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("text/html");
    expect(await refused.text()).toContain('data-code="playback_token_required"');
    const token = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) + 600);
    const byToken = await (await api(`/embed/${token}`)).text();
    expect(byToken).toContain(`src="http://api.test/play/${token}/master.m3u8"`);
    // A private video's poster shows through the token's thumbnail URL, not the public one (403).
    expect(byToken).toContain(`<media-poster-image slot="poster" src="http://api.test/play/${token}/thumbnail">`);
    expect((await api("/embed/01JD6Q2V4Y9T3KX8M1N5P7R2S4")).status).toBe(404);
    expect((await api("/embed/garbage")).status).toBe(403);
    expect(await errorCode(await api("/play/garbage/x.txt"))).toBe("invalid_playback_token");
  });

  it("honours If-Range: a Range whose If-Range names another file, or is malformed, gets the whole file", async () => {
    const { id } = await readyVideo({ mp4: true });
    const whole = await api(`/play/${id}/video.mp4`);
    const etag = whole.headers.get("etag") as string;
    const lastModified = whole.headers.get("last-modified") as string;
    await whole.arrayBuffer();
    for (const ifRange of [etag, lastModified]) {
      const partial = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=0-9", "if-range": ifRange } });
      expect(partial.status, ifRange).toBe(206);
      expect(new Uint8Array(await partial.arrayBuffer())).toEqual(MP4.slice(0, 10));
    }
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    for (const ifRange of ['"another"', `W/${etag}`, earlier, "yesterday", '"a', "garbage"]) {
      const full = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=0-9", "if-range": ifRange } });
      expect(full.status, ifRange).toBe(200);
      expect(full.headers.get("content-range")).toBeNull();
      expect(new Uint8Array(await full.arrayBuffer())).toEqual(MP4);
    }
    // An If-Range that fails also lifts an unsatisfiable range: the whole file, not 416.
    const lifted = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=5000-", "if-range": '"x"' } });
    expect(lifted.status).toBe(200);
    await lifted.arrayBuffer();
  });

  it("answers a range starting past the end with 416 however large its numbers", async () => {
    const { id } = await readyVideo({ mp4: true });
    for (const range of ["bytes=99999999999999999999-", "bytes=99999999999999999999-99999999999999999999"]) {
      const response = await api(`/play/${id}/video.mp4`, { headers: { range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get("content-range")).toBe("bytes */1000");
      expect(await errorCode(response)).toBe("range_not_satisfiable");
    }
    const huge = await api(`/play/${id}/video.mp4`, { headers: { range: "bytes=990-99999999999999999999" } });
    expect(huge.status).toBe(206);
    expect(huge.headers.get("content-range")).toBe("bytes 990-999/1000");
    await huge.arrayBuffer();
  });

  it("answers other methods on /play/ with 405 and Allow", async () => {
    const { id } = await readyVideo();
    for (const [method, path] of [
      ["POST", `/play/${id}/master.m3u8`],
      ["PUT", `/play/${id}/360p/seg_00000.ts`],
      ["DELETE", `/play/${id}/thumbnail`],
    ]) {
      const response = await api(path as string, { method });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(await errorCode(response)).toBe("method_not_allowed");
      expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("serves the current thumbnail under the token (private) and the id (public), privately cached", async () => {
    const { id, key } = await readyVideo({ visibility: "private" });
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", {})));
    const token = (await minted.json()) as { token: string; thumbnail: string };
    expect(token.thumbnail).toBe(`http://api.test/play/${token.token}/thumbnail`);
    const poster = await api(`/play/${token.token}/thumbnail`);
    expect(poster.status).toBe(200);
    expect(poster.headers.get("content-type")).toBe("image/jpeg");
    expect(poster.headers.get("cache-control")).toBe("private");
    expect(new Uint8Array(await poster.arrayBuffer())).toEqual(
      new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0xff, 0xd9]),
    );
    // By id, a private video's thumbnail is refused as its other /play/ files are.
    const byId = await api(`/play/${id}/thumbnail`);
    expect(byId.status).toBe(403);
    expect(await errorCode(byId)).toBe("playback_token_required");
    // A custom thumbnail is the current one, with its own type.
    const custom = await api(
      `/v1/videos/${id}/thumbnail`,
      bearer(key, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
    );
    expect(custom.status).toBe(200);
    const image = await api(`/play/${token.token}/thumbnail`);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("cache-control")).toBe("private");
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(stripMetadata(IMAGES.rgbPng, "image/png"));
    // Public: the id URL serves the same.
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "public" })));
    const byIdNow = await api(`/play/${id}/thumbnail`);
    expect(byIdNow.status).toBe(200);
    expect(byIdNow.headers.get("content-type")).toBe("image/png");
    await byIdNow.arrayBuffer();
    // No thumbnail at all (the custom one removed, the poster gone): 404 not_found.
    await api(`/v1/videos/${id}/thumbnail`, bearer(key, { method: "DELETE" }));
    const row = (await env.DB.prepare("SELECT project_id FROM videos WHERE id = ?").bind(id).first()) as {
      project_id: string;
    };
    await env.MEDIA.delete(posterKey(row.project_id, id));
    const none = await api(`/play/${token.token}/thumbnail`);
    expect(none.status).toBe(404);
    expect(await errorCode(none)).toBe("not_found");
  });
});

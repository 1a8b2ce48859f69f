import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBinary } from "../../encoder/binaries.mjs";
import { keyedTenant } from "./client.ts";
import { binaries, clip, probe, storedKeys, uploadVideo, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

// What docs/import-clips-search.md promises, end to end through `npm run dev` and the real encoder:
// a clip playlist cut from a ready video, clips as videos, allowed origins on /play/ and /embed/,
// and tags, metadata and search.

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;

beforeAll(async () => {
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "peers" });
});

afterAll(async () => {
  await server?.stop();
});

const segmentsOf = (playlist: string) => playlist.split("\n").filter((line) => line.endsWith(".ts"));
const secondsOf = (playlist: string) =>
  playlist
    .split("\n")
    .filter((line) => line.startsWith("#EXTINF:"))
    .reduce((sum, line) => sum + Number.parseFloat(line.slice(8)), 0);

/** The mean luma (0–255) of the first frame of a playlist or file, as ffmpeg's signalstats sees it. */
async function firstFrameLuma(url: string): Promise<number> {
  const stats = "signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-";
  const run = await runBinary(
    binaries.ffmpeg,
    ["-v", "error", "-i", url, "-frames:v", "1", "-vf", stats, "-f", "null", "-"],
    {
      timeoutMs: 30_000,
    },
  );
  const value = /YAVG=([\d.]+)/.exec(run.stdout)?.[1];
  if (value === undefined) throw new Error(`no luma for ${url}: ${run.stderr}`);
  return Number(value);
}

describe("clips, allowed origins, tags, metadata and search over HTTP", () => {
  it("cuts a ready video's playlists to a range, and a ranged token's stay within it", async () => {
    const source = await clip({ width: 640, height: 360, seconds: 14 });
    const { id } = await uploadVideo(tenant.call, source, { title: "Clip source" });
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 120);
    expect(video.status).toBe("ready");
    const master = await fetch(`${server.baseUrl}/play/${id}/master.m3u8?start=4.5&end=9`);
    expect(master.status).toBe(200);
    const text = await master.text();
    const variantUri = text.split("\n").find((line) => line.includes("index.m3u8")) as string;
    expect(variantUri).toMatch(/\?start=4\.5&end=9$/);
    const variant = await (await fetch(new URL(variantUri, master.url))).text();
    const whole = await (await fetch(new URL(variantUri.split("?")[0] as string, master.url))).text();
    expect(segmentsOf(variant).length).toBeGreaterThan(0);
    expect(segmentsOf(variant).length).toBeLessThan(segmentsOf(whole).length);
    // The listed segments add up to within one segment of end − start, and cover the span.
    const longest = Math.max(
      ...whole
        .split("\n")
        .filter((l) => l.startsWith("#EXTINF:"))
        .map((l) => Number.parseFloat(l.slice(8))),
    );
    expect(Math.abs(secondsOf(variant) - 4.5)).toBeLessThanOrEqual(longest + 0.001);
    expect(secondsOf(variant)).toBeGreaterThanOrEqual(4.5 - 0.001);
    // A player reads the clip: ffprobe opens the cut playlist and finds its video.
    const probed = await probe(`${server.baseUrl}/play/${id}/master.m3u8?start=4.5&end=9`);
    expect(probed.streams.some((stream) => stream.codec_type === "video")).toBe(true);

    const minted = await tenant.call("POST", `/v1/videos/${id}/playback-tokens`, { start: 4, end: 8 });
    expect(minted.status).toBe(201);
    const token = minted.json.token as string;
    const ranged = await (await fetch(`${server.baseUrl}/play/${token}/${variantUri.split("?")[0]}`)).text();
    expect(segmentsOf(ranged).length).toBeLessThan(segmentsOf(whole).length);
    const widened = await fetch(`${server.baseUrl}/play/${token}/master.m3u8?start=0&end=14`);
    expect(widened.status).toBe(400);
    expect(((await widened.json()) as { error: { code: string } }).error.code).toBe("invalid_query");
    const outside = segmentsOf(whole).find((name) => !segmentsOf(ranged).includes(name)) as string;
    const folder = variantUri.split("/")[0];
    expect((await fetch(`${server.baseUrl}/play/${token}/${folder}/${outside}`)).status).toBe(404);
  });

  it("refuses other origins on /play/ and /embed/, and frames the embed page only from allowed ones", async () => {
    const source = await clip({ width: 320, height: 180, seconds: 2 });
    const { id } = await uploadVideo(tenant.call, source, { allowedOrigins: ["https://site.example"] });
    await waitForStatus(tenant.call, id, ["ready"], 120);
    const master = `${server.baseUrl}/play/${id}/master.m3u8`;
    const refused = await fetch(master, { headers: { origin: "https://elsewhere.example" } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
    expect((await fetch(master, { headers: { referer: "https://site.example/watch" } })).status).toBe(200);
    expect((await fetch(master)).status).toBe(200);
    const embed = await fetch(`${server.baseUrl}/embed/${id}`, { headers: { referer: "https://site.example/" } });
    expect(embed.status).toBe(200);
    // The service's own origin frames it too: the dashboard shows the player (docs/security.md).
    expect(embed.headers.get("content-security-policy")).toBe(`frame-ancestors ${server.baseUrl} https://site.example`);
    expect((await fetch(`${server.baseUrl}/embed/${id}`, { headers: { referer: "https://x.example/" } })).status).toBe(
      403,
    );
  });

  it("encodes a clip as a video from the frame its span starts at, and it plays after its source is deleted", async () => {
    // The picture turns white at 3 s (frame 75 at 25 fps).
    const white = "drawbox=w=iw:h=ih:c=white:t=9999:enable='gte(t,3)'";
    const source = await clip({ width: 640, height: 360, seconds: 8, extra: ["-vf", white] });
    const { id } = await uploadVideo(tenant.call, source, { title: "Clip source" });
    expect((await waitForStatus(tenant.call, id, ["ready", "errored"], 120)).status).toBe("ready");

    const cut = async (start: number, end: number) => {
      const made = await tenant.call("POST", "/v1/videos", { clipOf: { videoId: id, start, end }, title: "Clip" });
      expect(made.status).toBe(201);
      expect(made.json.upload).toBeUndefined();
      expect(made.json.video.status).toBe("uploaded");
      return made.json.video.id as string;
    };
    const atWhite = await cut(3, 5);
    const before = await cut(2.96, 4.96);
    for (const clipId of [atWhite, before]) {
      const ready = await waitForStatus(tenant.call, clipId, ["ready", "errored"], 120);
      expect(ready.status).toBe("ready");
      expect(Math.abs((ready.duration ?? 0) - 2)).toBeLessThanOrEqual(0.04);
    }
    // The first frame of each: white from 3 s on, the pattern one frame before it.
    expect(await firstFrameLuma(`${server.baseUrl}/play/${atWhite}/360p/index.m3u8`)).toBeGreaterThan(200);
    expect(await firstFrameLuma(`${server.baseUrl}/play/${before}/360p/index.m3u8`)).toBeLessThan(200);

    // A token bound to 4–6 s shows nothing from before it: a frame at 1 s is refused, and its poster
    // is a frame from within the range (white), not the video's own poster 1 s in (the pattern).
    const minted = await tenant.call("POST", `/v1/videos/${id}/playback-tokens`, { start: 4, end: 6 });
    const ranged = `${server.baseUrl}/play/${minted.json.token as string}/thumbnail`;
    const early = await fetch(`${ranged}?time=1`);
    expect([early.status, ((await early.json()) as { error: { code: string } }).error.code]).toEqual([
      403,
      "invalid_playback_token",
    ]);
    // The range's poster is a frame made on demand: the first asks may find it not made yet.
    await expect.poll(async () => (await fetch(ranged, { method: "HEAD" })).status, { timeout: 30_000 }).toBe(200);
    expect(await firstFrameLuma(ranged)).toBeGreaterThan(200);
    expect(await firstFrameLuma(`${server.baseUrl}/play/${id}/thumbnail`)).toBeLessThan(200);

    // Deleted, the video leaves its source to its clips, which still play; the last one removes it.
    const prefix = `videos/${tenant.projectId}/${id}/`;
    expect((await tenant.call("DELETE", `/v1/videos/${id}`)).status).toBe(204);
    // The deletions queue runs after the response.
    const stored = () => storedKeys(server.persistTo, prefix);
    await expect.poll(stored, { timeout: 15_000 }).toEqual([`${prefix}source`]);
    const segment = await fetch(`${server.baseUrl}/play/${atWhite}/360p/seg_00000.ts`);
    expect(segment.status).toBe(200);
    await segment.arrayBuffer();
    for (const clipId of [atWhite, before])
      expect((await tenant.call("DELETE", `/v1/videos/${clipId}`)).status).toBe(204);
    await expect.poll(stored, { timeout: 15_000 }).toEqual([]);
  });

  it("finds videos by tag, metadata and title words, accent-insensitively", async () => {
    const made = await tenant.call("POST", "/v1/videos", {
      title: "Démonstration produit",
      tags: ["demo"],
      metadata: { campaign: "fall" },
    });
    expect(made.status).toBe(201);
    const id = made.json.video.id as string;
    const found = await tenant.call("GET", "/v1/videos?search=DEMO%20prod&tag=demo&metadata[campaign]=fall");
    expect(found.status).toBe(200);
    expect(found.json.data.map((video: { id: string }) => video.id)).toEqual([id]);
    const patched = await tenant.call("PATCH", `/v1/videos/${id}`, { metadata: { campaign: null, owner: "ana" } });
    expect(patched.json.metadata).toEqual({ owner: "ana" });
  });
});

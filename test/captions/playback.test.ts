import { describe, expect, it } from "vitest";
import { timelineStart } from "../../media-plan/plan.mjs";
import { mintPlaybackToken } from "../../src/playback/tokens";
import { finishAll, playable, probeFacts, withFakeEncoder } from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";

const SECRET = "test-playback-secret-0123456789abcdef01";
const VTT = "WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nHello\n";
/** The video's duration as its probe reports it. */
const DURATION = 6;

const encoder = withFakeEncoder();

function putTrack(key: string, id: string, language: string, body = VTT, query = "") {
  return api(
    `/v1/videos/${id}/captions/${language}${query}`,
    bearer(key, { method: "PUT", body, headers: { "content-type": "text/vtt" } }),
  );
}

/** A video of 360p through its encoding: playable, then ready unless told otherwise. */
async function video(options: { ready?: boolean; seconds?: number } = {}) {
  const { key, session, project } = await newWorkspace();
  await api(
    `/v1/projects/${project.id}/encoding-settings`,
    withCookie(session, json("PATCH", { enabledResolutions: ["360p"] })),
  );
  const { id } = await playable(encoder(), key, probeFacts(options.seconds ?? DURATION));
  if (options.ready !== false) await finishAll(encoder(), id);
  return { key, id };
}

const mediaLine = (language: string, label: string) =>
  `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="${label}",LANGUAGE="${language}",AUTOSELECT=YES,DEFAULT=NO,URI="captions/${language}.m3u8"`;

describe("caption tracks in playback", () => {
  it("puts every track in the master playlist at once, and takes a deleted one out at once", async () => {
    const { key, id } = await video();
    const plain = await api(`/play/${id}/master.m3u8`);
    const plainTag = plain.headers.get("etag") as string;
    const master = await plain.text();

    expect((await putTrack(key, id, "pt-BR")).status).toBe(200);
    expect((await putTrack(key, id, "en", VTT, "?label=English%20(CC)")).status).toBe(200);
    const withTracks = await api(`/play/${id}/master.m3u8`);
    expect(withTracks.status).toBe(200);
    expect(withTracks.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(withTracks.headers.get("access-control-allow-origin")).toBe("*");
    expect(withTracks.headers.get("cache-control")).toBe("no-cache");
    const text = await withTracks.text();
    // The group before the first variant, every variant naming it, the rest as it was.
    const lines = master.trim().split("\n");
    const first = lines.findIndex((line) => line.startsWith("#EXT-X-STREAM-INF:"));
    expect(text.trim().split("\n")).toEqual([
      ...lines.slice(0, first),
      mediaLine("en", "English (CC)"),
      mediaLine("pt-BR", "Brazilian Portuguese"),
      ...lines.slice(first).map((line) => (line.startsWith("#EXT-X-STREAM-INF:") ? `${line},SUBTITLES="subs"` : line)),
    ]);
    const etag = withTracks.headers.get("etag") as string;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(etag).not.toBe(plainTag);
    expect((await api(`/play/${id}/master.m3u8`, { headers: { "if-none-match": etag } })).status).toBe(304);
    // A client holding the playlist from before the tracks gets the new one.
    expect((await api(`/play/${id}/master.m3u8`, { headers: { "if-none-match": plainTag } })).status).toBe(200);
    const head = await api(`/play/${id}/master.m3u8`, { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe(String(new TextEncoder().encode(text).byteLength));
    expect(await head.text()).toBe("");

    await api(`/v1/videos/${id}/captions/en`, bearer(key, { method: "DELETE" }));
    const fewer = await (await api(`/play/${id}/master.m3u8`)).text();
    expect(fewer).toContain(mediaLine("pt-BR", "Brazilian Portuguese"));
    expect(fewer).not.toContain('LANGUAGE="en"');
    await api(`/v1/videos/${id}/captions/pt-BR`, bearer(key, { method: "DELETE" }));
    const none = await api(`/play/${id}/master.m3u8`);
    expect(await none.text()).toBe(master);
    expect(none.headers.get("etag")).toBe(plainTag);
  });

  it("serves the track, its subtitle playlist (as long as the video) and that playlist's segment", async () => {
    const { key, id } = await video();
    const bom = `\ufeff${VTT.replaceAll("\n", "\r\n")}`;
    await putTrack(key, id, "pt-BR", bom);

    const track = await api(`/play/${id}/captions/pt-BR.vtt`);
    expect(track.status).toBe(200);
    expect(track.headers.get("content-type")).toBe("text/vtt");
    expect(track.headers.get("access-control-allow-origin")).toBe("*");
    expect(track.headers.get("cache-control")).toBe("no-cache");
    expect(new Uint8Array(await track.arrayBuffer())).toEqual(new TextEncoder().encode(bom));
    const etag = track.headers.get("etag") as string;
    expect((await api(`/play/${id}/captions/pt-BR.vtt`, { headers: { "if-none-match": etag } })).status).toBe(304);
    // The language is compared case-insensitively here too.
    expect((await api(`/play/${id}/captions/PT-br.vtt`)).status).toBe(200);

    const playlist = await api(`/play/${id}/captions/pt-BR.m3u8`);
    expect(playlist.status).toBe(200);
    expect(playlist.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(playlist.headers.get("access-control-allow-origin")).toBe("*");
    expect(playlist.headers.get("last-modified")).toMatch(/GMT$/);
    const lines = (await playlist.text()).split("\n");
    expect(lines).toContain("#EXT-X-PLAYLIST-TYPE:VOD");
    expect(lines).toContain("#EXT-X-ENDLIST");
    const durations = lines
      .filter((line) => line.startsWith("#EXTINF:"))
      .map((line) => Number.parseFloat(line.slice(8)));
    expect(durations.reduce((a, b) => a + b, 0)).toBeCloseTo(DURATION, 3);
    const segmentUri = lines[lines.indexOf(lines.find((line) => line.startsWith("#EXTINF:")) as string) + 1];
    expect(segmentUri).toBe("pt-BR/seg_00000.vtt");

    const segment = await api(`/play/${id}/captions/${segmentUri}`);
    expect(segment.status).toBe(200);
    expect(segment.headers.get("content-type")).toBe("text/vtt");
    // Cue time 0 is where the video's segments start their MPEG-TS timeline.
    const mpegts = Math.round(timelineStart() * 90_000);
    expect(await segment.text()).toBe(
      `WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:${mpegts},LOCAL:00:00:00.000\n\n00:00:00.500 --> 00:00:02.000\nHello\n`,
    );
  });

  it("answers 404 not_found for a track the video does not have, a path that names none, and a video not ready", async () => {
    const { key, id } = await video();
    await putTrack(key, id, "en");
    for (const path of [
      "captions/fr.vtt",
      "captions/fr.m3u8",
      "captions/fr/seg_00000.vtt",
      "captions/en.srt",
      "captions/en/seg_00001.vtt",
      "captions/en_US.vtt",
      "captions/.vtt",
      "captions/en",
      "captions/",
    ]) {
      const response = await api(`/play/${id}/${path}`);
      expect(response.status, path).toBe(404);
      expect(await errorCode(response)).toBe("not_found");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
    // A playable video's tracks play already (docs/encoding.md#long-videos-playable-in-seconds:
    // playable is playable).
    const processing = await video({ ready: false });
    expect((await putTrack(processing.key, processing.id, "en")).status).toBe(200);
    expect((await api(`/play/${processing.id}/captions/en.vtt`)).status).toBe(200);
  });

  it("keeps a private video's tracks behind a token, and a deleted video's gone", async () => {
    const { key, id } = await video();
    await putTrack(key, id, "en");
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    for (const path of ["captions/en.vtt", "captions/en.m3u8", "captions/en/seg_00000.vtt", "captions/zz.vtt"]) {
      const refused = await api(`/play/${id}/${path}`);
      expect(refused.status, path).toBe(403);
      expect(await errorCode(refused)).toBe("playback_token_required");
    }
    const token = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) + 600);
    expect(await (await api(`/play/${token}/captions/en.vtt`)).text()).toBe(VTT);
    expect(await (await api(`/play/${token}/master.m3u8`)).text()).toContain(mediaLine("en", "English"));
    const tokenPage = await (await api(`/embed/${token}`)).text();
    expect(tokenPage).toContain(`src="http://api.test/play/${token}/captions/en.vtt"`);

    await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    for (const path of [
      `/play/${token}/captions/en.vtt`,
      `/play/${id}/captions/en.vtt`,
      `/play/${token}/master.m3u8`,
    ]) {
      const gone = await api(path);
      expect(gone.status, path).toBe(404);
      expect(await errorCode(gone)).toBe("not_found");
    }
  });

  it("holds only the cues that meet a ranged token's range, in the track and in the subtitle segment", async () => {
    const { key, id } = await video({ seconds: 20 });
    const cue = (start: string, end: string, text: string) => `${start} --> ${end}\n${text}`;
    const track = [
      "WEBVTT\n\nSTYLE\n::cue { color: yellow }",
      cue("00:00:00.000", "00:00:02.000", "at the start"),
      cue("00:00:05.000", "00:00:08.000", "ends where the range starts"),
      cue("00:00:07.000", "00:00:08.500", "reaches in"),
      cue("00:00:09.000", "00:00:10.000", "inside"),
      cue("00:00:11.500", "00:00:13.000", "reaches out"),
      cue("00:00:12.000", "00:00:14.000", "starts where it ends"),
      cue("00:00:18.000", "00:00:20.000", "at the end"),
    ].join("\n\n");
    expect((await putTrack(key, id, "en", `${track}\n`)).status).toBe(200);
    const mint = async (range: Record<string, number>) => {
      const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", range)));
      return ((await minted.json()) as { token: string }).token;
    };
    const texts = (vtt: string) => [...vtt.matchAll(/-->.*\n(.*)/g)].map((match) => match[1]);
    const ranged = await mint({ start: 8, end: 12 });
    const kept = ["reaches in", "inside", "reaches out"];
    const file = await api(`/play/${ranged}/captions/en.vtt`);
    expect([file.status, file.headers.get("content-type")]).toEqual([200, "text/vtt"]);
    const cut = await file.text();
    expect(cut.startsWith("WEBVTT\n\nSTYLE\n::cue { color: yellow }\n\n")).toBe(true);
    expect(texts(cut)).toEqual(kept);
    const segment = await (await api(`/play/${ranged}/captions/en/seg_00000.vtt`)).text();
    expect(segment).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\d+,LOCAL:00:00:00.000\n/);
    expect(texts(segment)).toEqual(kept);
    // A range with only a start runs to the video's end; a token without one has the whole track.
    expect(texts(await (await api(`/play/${await mint({ start: 12 })}/captions/en.vtt`)).text())).toEqual([
      "reaches out",
      "starts where it ends",
      "at the end",
    ]);
    expect(await (await api(`/play/${await mint({})}/captions/en.vtt`)).text()).toBe(`${track}\n`);
    expect(texts(await (await api(`/play/${id}/captions/en/seg_00000.vtt`)).text())).toHaveLength(7);
  });

  it("offers every track on the embed page, as a <track> of the video, its label escaped", async () => {
    const { key, id } = await video();
    await putTrack(key, id, "fr");
    await putTrack(key, id, "en", VTT, `?label=${encodeURIComponent("<b>English</b> & more")}`);
    const page = await api(`/embed/${id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const tracks = [...html.matchAll(/<track kind="subtitles"[^>]*>/g)].map((match) => match[0]);
    expect(tracks).toEqual([
      `<track kind="subtitles" srclang="en" label="&lt;b&gt;English&lt;/b&gt; &amp; more" src="http://api.test/play/${id}/captions/en.vtt" />`,
      `<track kind="subtitles" srclang="fr" label="French" src="http://api.test/play/${id}/captions/fr.vtt" />`,
    ]);
    expect(html).toContain(
      `<track kind="metadata" label="thumbnails" src="http://api.test/play/${id}/storyboard.vtt" default />`,
    );
    expect(html).not.toContain("<b>English");
  });
});

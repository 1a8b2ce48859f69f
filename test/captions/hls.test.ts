import { describe, expect, it } from "vitest";
import { subtitlePlaylist, subtitleSegment, withSubtitles } from "../../src/captions/hls";
import { parseWebVtt } from "../../src/captions/webvtt";
import { playlistText, quoted } from "../../src/lib/playlist-text";

const MASTER = [
  "#EXTM3U",
  "#EXT-X-VERSION:3",
  "#EXT-X-INDEPENDENT-SEGMENTS",
  '#EXT-X-STREAM-INF:BANDWIDTH=900000,AVERAGE-BANDWIDTH=700000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"',
  "360p/index.m3u8",
  '#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"',
  "720p/index.m3u8",
  "",
].join("\n");

const TRACKS = [
  { language: "en", label: "English" },
  { language: "pt-BR", label: "Português (Brasil)" },
];

describe("the master playlist with caption tracks", () => {
  it("adds a SUBTITLES group before the variants, one entry per track, and names it on every variant", () => {
    expect(withSubtitles(MASTER, TRACKS)).toBe(
      [
        "#EXTM3U",
        "#EXT-X-VERSION:3",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",AUTOSELECT=YES,DEFAULT=NO,URI="captions/en.m3u8"',
        '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Português (Brasil)",LANGUAGE="pt-BR",AUTOSELECT=YES,DEFAULT=NO,URI="captions/pt-BR.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=900000,AVERAGE-BANDWIDTH=700000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",SUBTITLES="subs"',
        "360p/index.m3u8",
        '#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",SUBTITLES="subs"',
        "720p/index.m3u8",
        "",
      ].join("\n"),
    );
  });

  it("leaves a master without tracks as it is, byte for byte", () => {
    expect(withSubtitles(MASTER, [])).toBe(MASTER);
    const crlf = MASTER.replaceAll("\n", "\r\n");
    expect(withSubtitles(crlf, [])).toBe(crlf);
  });

  it("replaces the group it added before: applied twice is applied once, and tracks can go", () => {
    const once = withSubtitles(MASTER, TRACKS);
    expect(withSubtitles(once, TRACKS)).toBe(once);
    const fewer = withSubtitles(once, [{ language: "fr", label: "French" }]);
    expect(fewer).toBe(withSubtitles(MASTER, [{ language: "fr", label: "French" }]));
    expect(fewer.match(/SUBTITLES="subs"/g)).toHaveLength(2);
    expect(fewer).not.toContain("pt-BR");
  });

  it("reads CRLF masters and other subtitle attributes the variants had, and writes LF", () => {
    const other = MASTER.replace("CODECS=", 'SUBTITLES="old",CODECS=').replaceAll("\n", "\r\n");
    const out = withSubtitles(other, TRACKS);
    expect(out).not.toContain("\r");
    expect(out).not.toContain('"old"');
    expect(out).toBe(withSubtitles(MASTER, TRACKS));
  });

  it("leaves out a track whose label cannot be an HLS quoted-string, line and paragraph separators included", () => {
    const good = { language: "fr", label: "Français" };
    for (const label of ['say "hi"', "two\nlines", "a\u2028#EXT-X-MEDIA:TYPE=SUBTITLES", "a\u2029b", "a\u0085b"]) {
      expect(withSubtitles(MASTER, [{ language: "en", label }, good])).toBe(withSubtitles(MASTER, [good]));
    }
  });

  it("checks every value it writes in one place (lib/playlist-text.ts)", () => {
    expect(() => quoted("a\u2028b")).toThrow(RangeError);
    expect(() => playlistText("seg\u2029.ts")).toThrow(RangeError);
    expect(quoted("avc1.640028,mp4a.40.2")).toBe('"avc1.640028,mp4a.40.2"');
  });
});

/** The EXTINF durations of a media playlist, and whether it is a complete VOD playlist. */
function readPlaylist(text: string) {
  const durations = [...text.matchAll(/^#EXTINF:([\d.]+),$/gm)].map((match) => Number(match[1]));
  const target = Number(/^#EXT-X-TARGETDURATION:(\d+)$/m.exec(text)?.[1]);
  return {
    durations,
    target,
    vod: text.includes("#EXT-X-PLAYLIST-TYPE:VOD") && text.trimEnd().endsWith("#EXT-X-ENDLIST"),
  };
}

describe("a subtitle playlist", () => {
  it.each([0.04, 3.02, 10, 3599.5, 43_200])("adds up to a video of %s s, as a complete VOD playlist", (duration) => {
    const text = subtitlePlaylist(duration, "en/seg_00000.vtt");
    expect(text.startsWith("#EXTM3U\n")).toBe(true);
    const { durations, target, vod } = readPlaylist(text);
    expect(vod).toBe(true);
    expect(Math.abs(durations.reduce((a, b) => a + b, 0) - duration)).toBeLessThanOrEqual(0.0005);
    for (const each of durations) expect(Math.round(each)).toBeLessThanOrEqual(target);
    expect(text).toContain("\nen/seg_00000.vtt\n");
  });

  it("refuses a duration that is not a positive number", () => {
    for (const duration of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => subtitlePlaylist(duration, "x.vtt")).toThrow(RangeError);
    }
  });
});

describe("a subtitle segment", () => {
  it("is the track with X-TIMESTAMP-MAP in its header, whatever the track's header and line ends", () => {
    const track =
      "\ufeffWEBVTT title\r\nKind: captions\r\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\r\n\r\n00:00:01.000 --> 00:00:02.000\r\nHi\r\n";
    const segment = subtitleSegment(track, 126_000);
    expect(segment).toBe(
      "WEBVTT title\nX-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\nKind: captions\n\n00:00:01.000 --> 00:00:02.000\nHi\n",
    );
    expect(parseWebVtt(segment)).toEqual(parseWebVtt(track));
    expect(subtitleSegment("WEBVTT", 0)).toBe("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n");
  });
});

// @ts-check
import { describe, expect, it } from "vitest";
import { bandwidth, codecs, masterPlaylist, parseMediaPlaylist } from "../playlist.mjs";

const VARIANT = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-TARGETDURATION:4
#EXT-X-MEDIA-SEQUENCE:0
#EXT-X-PLAYLIST-TYPE:VOD
#EXT-X-INDEPENDENT-SEGMENTS
#EXTINF:4.000000,
seg_00000.ts
#EXTINF:2.040000,
seg_00001.ts
#EXT-X-ENDLIST
`;

describe("parseMediaPlaylist", () => {
  it("reads the segments of a finished VOD playlist", () => {
    expect(parseMediaPlaylist(VARIANT)).toEqual([
      { duration: 4, uri: "seg_00000.ts" },
      { duration: 2.04, uri: "seg_00001.ts" },
    ]);
  });

  it("refuses an unfinished playlist, one without segments, and segments outside the folder", () => {
    expect(() => parseMediaPlaylist(VARIANT.replace("#EXT-X-ENDLIST\n", ""))).toThrow(/ENDLIST/);
    expect(() => parseMediaPlaylist("#EXTM3U\n#EXT-X-ENDLIST\n")).toThrow(/no segment/);
    expect(() => parseMediaPlaylist(VARIANT.replace("seg_00001.ts", "../seg_00001.ts"))).toThrow(/sibling/);
    expect(() => parseMediaPlaylist(VARIANT.replace("seg_00001.ts", "http://x/seg.ts"))).toThrow(/sibling/);
    expect(() => parseMediaPlaylist("not a playlist")).toThrow(/M3U8/);
  });
});

describe("bandwidth", () => {
  it("is the peak segment bit rate, with the average beside it", () => {
    expect(
      bandwidth([
        { duration: 4, bytes: 500_000 },
        { duration: 4, bytes: 1_000_000 },
      ]),
    ).toEqual({ peak: 2_000_000, average: 1_500_000 });
  });

  it("does not let a last segment under a second set the peak", () => {
    expect(
      bandwidth([
        { duration: 4, bytes: 500_000 },
        { duration: 0.04, bytes: 50_000 },
      ]),
    ).toEqual({ peak: 1_089_109, average: 1_089_109 });
    expect(bandwidth([{ duration: 0.5, bytes: 10_000 }])).toEqual({ peak: 160_000, average: 160_000 });
  });
});

describe("codecs", () => {
  it("names H.264 by profile and level, with AAC-LC when there is audio", () => {
    expect(codecs({ profile: "High", level: 31 }, true)).toBe("avc1.64001f,mp4a.40.2");
    expect(codecs({ profile: "High", level: 40 }, false)).toBe("avc1.640028");
    expect(codecs({ profile: "Main", level: 30 }, false)).toBe("avc1.4d401e");
    expect(() => codecs({ profile: "High 4:4:4", level: 31 }, false)).toThrow();
    expect(() => codecs({ profile: "High", level: Number.NaN }, false)).toThrow();
  });
});

describe("masterPlaylist", () => {
  it("lists one variant per rendition with BANDWIDTH, RESOLUTION and CODECS, by relative URI", () => {
    const text = masterPlaylist([
      {
        rendition: { resolution: "360p", width: 640, height: 360 },
        uri: "360p/index.m3u8",
        bandwidth: 900_000,
        averageBandwidth: 700_000,
        codecs: "avc1.64001e,mp4a.40.2",
      },
      {
        rendition: { resolution: "720p", width: 1280, height: 720 },
        uri: "720p/index.m3u8",
        bandwidth: 3_000_000,
        averageBandwidth: 2_000_000,
        codecs: "avc1.64001f,mp4a.40.2",
      },
    ]);
    expect(text).toBe(`#EXTM3U
#EXT-X-VERSION:3
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-STREAM-INF:BANDWIDTH=900000,AVERAGE-BANDWIDTH=700000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"
360p/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"
720p/index.m3u8
`);
  });
});

// @ts-check
import { describe, expect, it } from "vitest";
import { ffmpegArgs, filterGraph, maxRateKbps, overlayPosition, posterTime, watermarkWidth } from "../ffmpeg-args.mjs";

/** @typedef {import("../ffmpeg-args.mjs").EncodePlan} EncodePlan */

/** @param {Partial<EncodePlan>} [overrides] @returns {EncodePlan} */
function plan(overrides = {}) {
  return {
    source: "/tmp/job/source",
    videoStream: 0,
    audioStream: 1,
    frameRate: 30,
    interlaced: false,
    renditions: [
      { resolution: "360p", width: 640, height: 360 },
      { resolution: "720p", width: 1280, height: 720 },
    ],
    watermark: null,
    mp4: false,
    posterTime: 1,
    outDir: "/tmp/job/out",
    threads: 2,
    ...overrides,
  };
}

/** The value after each occurrence of `flag`. @param {string[]} args @param {string} flag */
function values(args, flag) {
  return args.flatMap((arg, i) => (arg === flag ? [/** @type {string} */ (args[i + 1])] : []));
}

/** @param {string[]} args @param {string} flag */
function value(args, flag) {
  const found = values(args, flag);
  expect(found, flag).toHaveLength(1);
  return /** @type {string} */ (found[0]);
}

describe("filterGraph", () => {
  it("splits the source once per rendition and scales each to its size with square pixels", () => {
    const graph = filterGraph(plan());
    expect(graph).toContain("[0:0]split=2[s0][s1]");
    expect(graph).toContain("[s0]scale=640:360:out_range=tv,setsar=1,format=yuv420p[v0]");
    expect(graph).toContain("[s1]scale=1280:720:out_range=tv,setsar=1,format=yuv420p,split=2[v1][still]");
    expect(graph).not.toContain("overlay");
    expect(graph).not.toContain("fps=");
  });

  it("gives the top rendition to the MP4 and the poster", () => {
    expect(filterGraph(plan({ mp4: true }))).toContain("format=yuv420p,split=3[v1][mp4][still]");
    expect(filterGraph(plan())).toContain(
      "[still]setpts=PTS-STARTPTS,select=gte(t\\,1),trim=end_frame=1,scale[poster]",
    );
    expect(filterGraph(plan({ posterTime: 0.75 }))).toContain("select=gte(t\\,0.75)");
  });

  it("reads the chosen video stream and caps the frame rate at 60", () => {
    expect(filterGraph(plan({ videoStream: 2 }))).toMatch(/^\[0:2\]split=2/);
    expect(filterGraph(plan({ frameRate: 120 }))).toMatch(/^\[0:0\]fps=60,split=2/);
    expect(filterGraph(plan({ frameRate: 59.94 }))).not.toContain("fps=");
    expect(filterGraph(plan({ interlaced: true, frameRate: 120 }))).toMatch(
      /^\[0:0\]bwdif=mode=send_frame:deint=interlaced,fps=60,split=2/,
    );
    expect(filterGraph(plan())).not.toContain("bwdif");
  });

  it("draws the watermark on every rendition at 15% of its width, at the opacity given", () => {
    const graph = filterGraph(
      plan({ watermark: { path: "/tmp/job/watermark", position: "top-right", opacity: 0.35 } }),
    );
    expect(graph).toContain("[1:v]format=rgba,colorchannelmixer=aa=0.35,split=2[w0][w1]");
    expect(graph).toContain("[w0]scale=96:-1[m0]");
    expect(graph).toContain("[w1]scale=192:-1[m1]");
    expect(graph).toContain("[b0][m0]overlay=x=main_w-overlay_w-13:y=13:format=auto,format=yuv420p[v0]");
    expect(graph).toContain("[b1][m1]overlay=x=main_w-overlay_w-26:y=26:format=auto,format=yuv420p,split=2[v1][still]");
  });

  it("places the watermark 2% of the width from the nearest edges, or centred", () => {
    expect(overlayPosition("top-left", 1280)).toBe("x=26:y=26");
    expect(overlayPosition("top-right", 1280)).toBe("x=main_w-overlay_w-26:y=26");
    expect(overlayPosition("bottom-left", 1280)).toBe("x=26:y=main_h-overlay_h-26");
    expect(overlayPosition("bottom-right", 1280)).toBe("x=main_w-overlay_w-26:y=main_h-overlay_h-26");
    expect(overlayPosition("center", 1280)).toBe("x=(main_w-overlay_w)/2:y=(main_h-overlay_h)/2");
    // A portrait frame: the margin follows its width, not its height.
    expect(overlayPosition("bottom-right", 360)).toBe("x=main_w-overlay_w-7:y=main_h-overlay_h-7");
    expect(watermarkWidth(1920)).toBe(288);
    expect(watermarkWidth(360)).toBe(54);
    expect(watermarkWidth(4)).toBe(1);
  });

  it("writes opacities as plain decimals", () => {
    for (const [opacity, text] of /** @type {const} */ ([
      [0, "0"],
      [1, "1"],
      [0.0000001, "0"],
      [1 / 3, "0.333333"],
    ])) {
      const graph = filterGraph(plan({ watermark: { path: "w", position: "center", opacity } }));
      expect(graph).toContain(`colorchannelmixer=aa=${text},`);
    }
  });
});

describe("ffmpegArgs", () => {
  it("makes HLS variants with audio in each, numbered folders, VOD playlists and aligned keyframes", () => {
    const args = ffmpegArgs(plan());
    expect(values(args, "-i")).toEqual(["/tmp/job/source"]);
    expect(values(args, "-map")).toEqual(["[v0]", "0:1", "[v1]", "0:1", "[poster]"]);
    expect(value(args, "-var_stream_map")).toBe("v:0,a:0 v:1,a:1");
    expect(value(args, "-hls_playlist_type")).toBe("vod");
    expect(value(args, "-hls_time")).toBe("4");
    expect(value(args, "-hls_segment_filename")).toBe("/tmp/job/out/%v/seg_%05d.ts");
    expect(args).toContain("/tmp/job/out/%v/index.m3u8");
    expect(value(args, "-force_key_frames")).toBe("expr:gte(t,n_forced*2)");
    expect(value(args, "-x264-params")).toBe("scenecut=0");
    expect(value(args, "-c:v")).toBe("libx264");
    expect(value(args, "-pix_fmt")).toBe("yuv420p");
    expect(value(args, "-c:a")).toBe("aac");
    expect(value(args, "-maxrate:v:0")).toBe("800k");
    expect(value(args, "-maxrate:v:1")).toBe("2800k");
    expect(args).not.toContain("/tmp/job/out/video.mp4");
  });

  it("leaves audio out entirely for a silent source", () => {
    const args = ffmpegArgs(plan({ audioStream: null }));
    expect(values(args, "-map")).toEqual(["[v0]", "[v1]", "[poster]"]);
    expect(value(args, "-var_stream_map")).toBe("v:0 v:1");
    expect(args).not.toContain("-c:a");
  });

  it("adds the MP4 of the top rendition, fast-started, with its own audio, when asked", () => {
    const args = ffmpegArgs(plan({ mp4: true }));
    expect(values(args, "-map")).toEqual(["[v0]", "0:1", "[v1]", "0:1", "[mp4]", "0:1", "[poster]"]);
    expect(value(args, "-movflags")).toBe("+faststart");
    expect(args[args.indexOf("/tmp/job/out/video.mp4") - 1]).toBe("mp4");
    expect(values(args, "-force_key_frames")).toHaveLength(2);
    expect(value(args, "-maxrate:v")).toBe("2800k");
    const silent = ffmpegArgs(plan({ mp4: true, audioStream: null }));
    expect(values(silent, "-map")).toEqual(["[v0]", "[v1]", "[mp4]", "[poster]"]);
  });

  it("takes the watermark image as the second input", () => {
    const args = ffmpegArgs(plan({ watermark: { path: "/tmp/job/watermark", position: "center", opacity: 1 } }));
    expect(values(args, "-i")).toEqual(["/tmp/job/source", "/tmp/job/watermark"]);
  });

  it("writes one poster frame as a JPEG", () => {
    const args = ffmpegArgs(plan());
    expect(args.slice(-13)).toEqual([
      "-map",
      "[poster]",
      "-frames:v",
      "1",
      "-q:v",
      "2",
      "-map_metadata",
      "-1",
      "-f",
      "image2",
      "-update",
      "1",
      "/tmp/job/out/poster.jpg",
    ]);
  });

  it("bounds threads, reports progress on standard output and drops source metadata", () => {
    const args = ffmpegArgs(plan({ threads: 3 }));
    expect(value(args, "-filter_complex_threads")).toBe("3");
    expect(values(args, "-threads")).toEqual(["3", "3"]);
    expect(value(args, "-progress")).toBe("pipe:1");
    expect(values(args, "-map_metadata")).toEqual(["-1", "-1"]);
  });

  it("refuses a plan without renditions", () => {
    expect(() => ffmpegArgs(plan({ renditions: [] }))).toThrow(RangeError);
  });
});

describe("posterTime and maxRateKbps", () => {
  it("takes the poster 1 s in, or at a quarter of a shorter clip", () => {
    expect(posterTime(60)).toBe(1);
    expect(posterTime(4)).toBe(1);
    expect(posterTime(3)).toBe(0.75);
    expect(posterTime(0)).toBe(0);
    expect(posterTime(Number.NaN)).toBe(0);
  });

  it("caps each rendition's bitrate by its shorter side; an own-size label takes the next row up", () => {
    expect(maxRateKbps("240p")).toBe(400);
    expect(maxRateKbps("1080p")).toBe(5000);
    expect(maxRateKbps("113p")).toBe(400);
    expect(maxRateKbps("481p")).toBe(2800);
    expect(maxRateKbps("2160p")).toBe(16000);
  });
});

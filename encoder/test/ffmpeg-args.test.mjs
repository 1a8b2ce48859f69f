// @ts-check
import { describe, expect, it } from "vitest";
import { storyboard } from "../../media-plan/pictures.mjs";
import { frameTime, planEncoding } from "../../media-plan/plan.mjs";
import { overlayPosition, segmentArgs, stillArgs, watermarkWidth } from "../ffmpeg-args.mjs";
import { fileArgs } from "../remux-args.mjs";
import { ALLOWED_FORMATS, allowedDemuxer, imageInput, sourceInput } from "../source.mjs";
import { spriteArgs, tileArgs } from "../storyboard-args.mjs";

const source = { url: "http://api.test/internal/encoding/V/J/source", token: "t".repeat(32) };
const plan = planEncoding(
  {
    format: "mpegts",
    duration: 40,
    startTime: 1.4,
    width: 1280,
    height: 720,
    frameRate: 30000 / 1001,
    videoStream: 0,
    audioStream: 1,
    interlaced: false,
  },
  { enabledResolutions: ["360p", "720p"], mp4: true, watermark: { position: "bottom-right", opacity: 0.5 } },
);
const features = { dropPriming: true, holdLastPicture: true };
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0]);
/** @param {string[]} args @param {string} name */
const option = (args, name) => args[args.indexOf(name) + 1];

describe("how a source is opened", () => {
  it("only over the network protocols, only by allowed demuxers, pinned once known, with the job's token", () => {
    const args = sourceInput(source, "mpegts");
    expect(option(args, "-protocol_whitelist")).toBe("http,https,tcp,tls");
    expect(option(args, "-format_whitelist")).toBe(ALLOWED_FORMATS.join(","));
    expect(option(args, "-f")).toBe("mpegts");
    expect(option(args, "-headers")).toBe(`Authorization: Bearer ${source.token}\r\n`);
    expect(args.at(-1)).toBe(source.url);
    expect(sourceInput(source, null)).not.toContain("-f");
  });

  it("allows no playlist, concat, image or subtitle demuxer", () => {
    for (const name of [
      "hls",
      "applehttp",
      "dash",
      "concat",
      "image2",
      "png_pipe",
      "webvtt",
      "srt",
      "ass",
      "tee",
      "data",
    ]) {
      expect(ALLOWED_FORMATS).not.toContain(name);
      expect(allowedDemuxer(name)).toBeNull();
    }
    expect(allowedDemuxer("mov,mp4,m4a,3gp,3g2,mj2")).toBe("mov");
    expect(allowedDemuxer("matroska,webm")).toBe("matroska");
  });

  it("reads the watermark as the image it is, from that one local file", () => {
    expect(imageInput("/tmp/w", png)).toEqual(["-protocol_whitelist", "file", "-f", "png_pipe", "-i", "/tmp/w"]);
    const webp = new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8L");
    expect(option(imageInput("/tmp/w", webp), "-f")).toBe("webp_pipe");
    expect(() => imageInput("/tmp/w", new TextEncoder().encode("#EXTM3U\nfile:///etc"))).toThrow();
  });
});

describe("a run's arguments", () => {
  const run = (from = 2, to = 4) =>
    segmentArgs({
      plan,
      source,
      watermark: { file: "/tmp/w", head: png },
      threads: 2,
      features,
      from,
      to,
      renditions: plan.renditions,
      outDir: "/out",
    });

  it("read from a second before the run's first frame, keeping the source's own timestamps", () => {
    const args = run();
    // Segment 2 starts at frame 240 of 30000/1001 fps: 8.008 s.
    expect(option(args, "-ss")).toBe("7.008");
    expect(args).toContain("-noaccurate_seek");
    expect(args).toContain("-copyts");
    const graph = option(args, "-filter_complex") ?? "";
    // The frame grid from the run's first frame in the source's own time (its start is 1.4 s).
    expect(graph).toContain("fps=30000/1001:start_time=9.408");
    expect(graph).toContain("tpad=stop=-1:stop_mode=clone");
    expect(graph).toContain("overlay=x=main_w-overlay_w-13:y=main_h-overlay_h-13");
    expect(option(args, "-output_ts_offset")).toBe(String(10 - 1.4));
  });

  it("read a clip from its offset into the source, its timestamps starting where the clip does", () => {
    const clip = { ...plan, source: { ...plan.source, offset: 100 } };
    const args = segmentArgs({
      plan: clip,
      source,
      watermark: null,
      threads: 2,
      features,
      from: 2,
      to: 3,
      renditions: clip.renditions,
      outDir: "/out",
    });
    expect(option(args, "-ss")).toBe("107.008");
    const graph = option(args, "-filter_complex") ?? "";
    expect(graph).toContain("fps=30000/1001:start_time=109.408");
    expect(option(args, "-output_ts_offset")).toBe(String(10 - 101.4));
    const still = stillArgs({ plan: clip, source, watermark: null, threads: 2, features, time: 1, file: "/s.jpg" });
    // Frame 30 (1.001 s), read from a second before it.
    expect(option(still, "-ss")).toBe("100.001");
  });

  it("cut each rendition at exact frame numbers, numbered from the run's first segment", () => {
    const args = run(2, 4);
    expect(args.filter((arg) => arg === "-segment_frames").length).toBe(2);
    expect(option(args, "-segment_frames")).toBe("120");
    expect(option(args, "-segment_start_number")).toBe("2");
    expect(args).toContain("/out/720p/seg_%05d.ts");
    expect(option(args, "-frames:v")).toBe("240");
    expect(option(args, "-force_key_frames")).toBe("expr:eq(mod(n,60),0)");
    expect(option(args, "-level:v")).toBe("3.0");
  });

  it("drop the AAC encoder's priming and pre-roll packets, or nothing on an ffmpeg that cannot", () => {
    expect(option(run(), "-bsf:a")).toBe("noise=drop=lt(n\\,2)");
    expect(option(run(0, 1), "-bsf:a")).toBe("noise=drop=lt(n\\,1)");
    const old = segmentArgs({
      plan,
      source,
      watermark: null,
      threads: 2,
      features: { dropPriming: false, holdLastPicture: false },
      from: 1,
      to: 2,
      renditions: plan.renditions,
      outDir: "/out",
    });
    expect(old).not.toContain("-bsf:a");
    expect(option(old, "-filter_complex")).not.toContain("tpad");
  });

  it("refuse a range outside the plan", () => {
    expect(() => run(3, 3)).toThrow(RangeError);
    expect(() => run(0, 99)).toThrow(RangeError);
  });
});

describe("stills and the MP4", () => {
  it("a still is one frame of the highest rendition, in full range, at the width asked", () => {
    const args = stillArgs({
      plan,
      source,
      watermark: null,
      threads: 1,
      features,
      time: 1,
      width: 320,
      file: "/out/s.jpg",
    });
    expect(option(args, "-frames:v")).toBe("1");
    expect(option(args, "-filter_complex")).toContain("scale=320:180:out_range=pc,format=yuvj420p");
    expect(args.at(-1)).toBe("/out/s.jpg");
  });

  it("the storyboard's sprite tiles the stills in cue order, from file inputs only", () => {
    const args = spriteArgs({ pattern: "/job/tile_%03d.jpg", columns: 10, rows: 3, file: "/job/storyboard.jpg" });
    expect(option(args, "-protocol_whitelist")).toBe("file");
    expect(option(args, "-start_number")).toBe("0");
    expect(option(args, "-vf")).toBe("tile=10x3,format=yuvj420p");
    expect(args.at(-1)).toBe("/job/storyboard.jpg");
  });

  it("the MP4 and the M4A copy the segments into a fragmented file that streams out", () => {
    const mp4 = fileArgs("mp4", plan);
    expect(option(mp4, "-c")).toBe("copy");
    expect(option(mp4, "-movflags")).toBe("+frag_keyframe+empty_moov+default_base_moof");
    expect(option(mp4, "-protocol_whitelist")).toBe("pipe");
    expect(mp4[mp4.lastIndexOf("-f") + 1]).toBe("mp4");
    expect(mp4.at(-1)).toBe("pipe:1");
    // The audio alone, a fragment about a segment long (4.004 s at 29.97 fps), as an M4A.
    const m4a = fileArgs("m4a", plan);
    expect(option(m4a, "-map")).toBe("0:a:0");
    expect(option(m4a, "-movflags")).toBe("+empty_moov+default_base_moof");
    expect(option(m4a, "-frag_duration")).toBe("4004000");
    expect(m4a[m4a.lastIndexOf("-f") + 1]).toBe("ipod");
  });

  it("a storyboard tile is the still of its cue's frame at the tile width", () => {
    const common = { plan, source, watermark: null, threads: 2, features };
    const cue = /** @type {{ frame: number }} */ (storyboard(plan).cues[1]);
    expect(tileArgs(common, 1, "/tmp/t.jpg")).toEqual(
      stillArgs({ ...common, time: frameTime(plan, cue.frame), width: 240, file: "/tmp/t.jpg" }),
    );
  });

  it("places a watermark 2% from the edges at 15% of the width", () => {
    expect(watermarkWidth(1280)).toBe(192);
    expect(overlayPosition("top-left", 1000)).toBe("x=20:y=20");
    expect(overlayPosition("center", 1000)).toBe("x=(main_w-overlay_w)/2:y=(main_h-overlay_h)/2");
  });
});

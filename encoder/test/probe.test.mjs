// @ts-check
import { describe, expect, it } from "vitest";
import { planEncoding } from "../../media-plan/plan.mjs";
import { probed } from "../../media-plan/test/probes.mjs";
import { interpretAudioProbe, interpretProbe, picturesRate } from "../probe.mjs";

const MP4 = "mov,mp4,m4a,3gp,3g2,mj2";

/** @param {Record<string, unknown>[]} streams @param {Record<string, unknown>} [format] */
function info(streams, format = { format_name: MP4, duration: "3.000000" }) {
  return { streams, format };
}

const video = (extra = {}) => ({
  index: 0,
  codec_type: "video",
  codec_name: "h264",
  width: 1920,
  height: 1080,
  avg_frame_rate: "30000/1001",
  ...extra,
});
const audio = { index: 1, codec_type: "audio", codec_name: "aac" };

describe("interpretProbe", () => {
  it("reads duration, size, streams and frame rate", () => {
    expect(interpretProbe(info([video(), audio]), 3)).toEqual({
      valid: true,
      duration: 3,
      width: 1920,
      height: 1080,
      videoStream: 0,
      audioStream: 1,
      audioLanguage: null,
      frameRate: 30000 / 1001,
      interlaced: false,
      rotation: 0,
      format: "mov",
      startTime: 0,
    });
  });

  it("applies rotation from the display matrix or the old rotate tag", () => {
    const matrix = video({ side_data_list: [{ side_data_type: "Display Matrix", rotation: -90 }] });
    expect(interpretProbe(info([matrix]), 1)).toMatchObject({ width: 1080, height: 1920, rotation: -90 });
    expect(interpretProbe(info([video({ tags: { rotate: "270" } })]), 1)).toMatchObject({ width: 1080, height: 1920 });
    expect(interpretProbe(info([video({ tags: { rotate: "180" } })]), 1)).toMatchObject({ width: 1920, height: 1080 });
  });

  it("applies a non-square pixel aspect ratio before rotation", () => {
    const anamorphic = video({ width: 1440, height: 1080, sample_aspect_ratio: "4:3" });
    expect(interpretProbe(info([anamorphic]), 1)).toMatchObject({ width: 1920, height: 1080 });
    expect(interpretProbe(info([video({ sample_aspect_ratio: "0:1" })]), 1)).toMatchObject({ width: 1920 });
  });

  it("tells an interlaced source", () => {
    expect(interpretProbe(info([video({ field_order: "tt" })]), 1)).toMatchObject({ interlaced: true });
    expect(interpretProbe(info([video({ field_order: "progressive" })]), 1)).toMatchObject({ interlaced: false });
  });

  it("has no audio stream for a silent source and ignores cover art", () => {
    expect(interpretProbe(info([video()]), 1)).toMatchObject({ audioStream: null });
    const cover = video({ index: 0, disposition: { attached_pic: 1 } });
    expect(interpretProbe(info([cover, { ...video(), index: 2 }, audio]), 1)).toMatchObject({ videoStream: 2 });
  });

  it("falls back to the stream's duration, and to none", () => {
    expect(interpretProbe(info([video({ duration: "5.5" })], { format_name: "matroska,webm" }), 1)).toMatchObject({
      duration: 5.5,
      format: "matroska",
    });
    expect(interpretProbe(info([video()], { format_name: "matroska,webm", duration: "N/A" }), 1)).toMatchObject({
      duration: null,
    });
  });

  it("refuses a format that is not a container of one file (a playlist, a raw stream, an image sequence)", () => {
    for (const format_name of ["hls", "h264", "concat", "image2", "tty"]) {
      expect(interpretProbe(info([video()], { format_name, duration: "3" }), 1)).toEqual({
        valid: false,
        reason: "the file is not in a video format that can be read",
      });
    }
  });

  it("refuses what is not a decodable video", () => {
    expect(interpretProbe({}, 0)).toMatchObject({ valid: false });
    expect(interpretProbe(info([audio]), 0)).toEqual({ valid: false, reason: "the file has audio but no video" });
    expect(interpretProbe(info([]), 0)).toEqual({ valid: false, reason: "the file has no video stream" });
    const coverOnly = [video({ disposition: { attached_pic: 1 } }), audio];
    expect(interpretProbe(info(coverOnly), 1)).toMatchObject({
      valid: false,
      reason: "the file has audio but no video",
    });
    expect(interpretProbe(info([video()]), 0)).toMatchObject({ valid: false, reason: /no frame/ });
    expect(interpretProbe(info([video({ width: 0 })]), 1)).toMatchObject({ valid: false });
    // Random bytes named *.bin become "binary text art"; pictures are not videos.
    expect(interpretProbe(info([video({ codec_name: "bintext" })], { format_name: "bin" }), 1)).toMatchObject({
      valid: false,
    });
    expect(interpretProbe(info([video({ codec_name: "png" })], { format_name: "png_pipe" }), 1)).toMatchObject({
      valid: false,
    });
  });
});

describe("the language of the audio", () => {
  it("is the audio stream's ISO 639 tag, in lower case; none for und or something else", () => {
    const tagged = (/** @type {unknown} */ language) =>
      interpretProbe(info([video(), { ...audio, tags: { language } }]), 1);
    expect(tagged("fra")).toMatchObject({ audioLanguage: "fra" });
    expect(tagged("ENG")).toMatchObject({ audioLanguage: "eng" });
    for (const none of ["und", "", "english", 7]) expect(tagged(none)).toMatchObject({ audioLanguage: null });
    expect(interpretProbe(info([video()]), 1)).toMatchObject({ audioStream: null, audioLanguage: null });
  });
});

describe("interpretAudioProbe", () => {
  const frames = (/** @type {number} */ index) => [{ stream_index: index }];
  it("takes an audio or video file's first audio stream, where it decodes", () => {
    expect(interpretAudioProbe({ ...info([{ ...audio, index: 2 }]), frames: frames(2) })).toEqual({
      valid: true,
      format: "mov",
      startTime: 0,
      audioStream: 2,
    });
    const mp3 = { format_name: "mp3", start_time: "0.025057" };
    expect(interpretAudioProbe({ ...info([{ ...audio, index: 0 }], mp3), frames: frames(0) })).toMatchObject({
      format: "mp3",
      startTime: 0.025057,
    });
  });

  it("refuses a file without audio, audio that does not decode, or a format that is not one file", () => {
    expect(interpretAudioProbe({ ...info([video()]), frames: frames(0) })).toMatchObject({
      valid: false,
      reason: "the file has no audio stream",
    });
    expect(interpretAudioProbe({ ...info([audio]), frames: [] })).toMatchObject({
      valid: false,
      reason: "its audio could not be decoded",
    });
    for (const format_name of ["hls", "concat", "aac", "image2"]) {
      expect(interpretAudioProbe({ ...info([audio], { format_name }), frames: frames(1) })).toMatchObject({
        valid: false,
      });
    }
  });
});

describe("picturesRate", () => {
  it("believes a declared rate the pictures show, in the first frames or at the end", () => {
    const frames = Array.from({ length: 16 }, (_, i) => i / 60);
    expect(picturesRate(60, frames, { count: 180, seconds: 3 })).toBe(60);
    // A still at the end (a slide), the head dense: believed.
    expect(picturesRate(60, frames, { count: 1, seconds: 3 })).toBe(60);
    // Two frames at 1 fps.
    expect(picturesRate(1, [0, 1], { count: 1, seconds: 2 })).toBe(1);
    expect(picturesRate(null, [0, 1], { count: 1, seconds: 2 })).toBe(null);
  });

  it("plans a file of three pictures over 10 hours declaring 60 fps by its pictures, not its declaration", () => {
    const rate = picturesRate(60, [0, 18_000, 36_000], { count: 1, seconds: 3 });
    expect(rate).toBeCloseTo(1 / 3, 5);
    const plan = planEncoding(probed({ frameRate: rate, duration: 36_000 }), {
      enabledResolutions: ["360p"],
      mp4: false,
      watermark: null,
    });
    expect(plan.frameRate).toEqual({ num: 1, den: 1 });
    expect(plan.frames).toBe(36_000);
  });
});

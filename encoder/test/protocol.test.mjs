// @ts-check
import { describe, expect, it } from "vitest";
import { contentType, isOutputPath, ProtocolError, parseHeartbeat, parseJob, parseResult } from "../protocol.mjs";

const job = () => ({
  version: 1,
  jobId: "01JD0000000000000000000000",
  attempt: 1,
  callback: { baseUrl: "https://api.example/internal/encoding/01JD0000000000000000000000/1", token: "t".repeat(32) },
  settings: { enabledResolutions: ["360p", "720p"], mp4: true, watermark: { position: "top-right", opacity: 0.5 } },
});

/** @param {unknown} value @param {string} path */
function refused(value, path) {
  try {
    parseJob(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect(/** @type {ProtocolError} */ (error).path).toBe(path);
    return;
  }
  throw new Error(`accepted: ${JSON.stringify(value)}`);
}

describe("parseJob", () => {
  it("accepts a well-formed job, with or without a watermark", () => {
    expect(parseJob(job())).toEqual(job());
    const plain = { ...job(), settings: { ...job().settings, watermark: null } };
    expect(parseJob(plain).settings.watermark).toBeNull();
  });

  it("drops a trailing slash from the base URL", () => {
    const withSlash = { ...job(), callback: { ...job().callback, baseUrl: "http://127.0.0.1:8787/cb/" } };
    expect(parseJob(withSlash).callback.baseUrl).toBe("http://127.0.0.1:8787/cb");
  });

  it("requires version 1", () => {
    refused({ ...job(), version: 2 }, "version");
    refused({ ...job(), version: "1" }, "version");
    const { version: _, ...rest } = job();
    refused(rest, "version");
  });

  it("refuses unknown fields at every level", () => {
    refused({ ...job(), extra: 1 }, "extra");
    refused({ ...job(), callback: { ...job().callback, extra: 1 } }, "callback.extra");
    refused({ ...job(), settings: { ...job().settings, outputCodecs: ["h264"] } }, "settings.outputCodecs");
    refused(
      { ...job(), settings: { ...job().settings, watermark: { position: "center", opacity: 1, imageKey: "k" } } },
      "settings.watermark.imageKey",
    );
  });

  it("checks every field's type and range", () => {
    refused(null, "");
    refused([], "");
    refused({ ...job(), jobId: "" }, "jobId");
    refused({ ...job(), jobId: "../etc" }, "jobId");
    refused({ ...job(), jobId: "x".repeat(65) }, "jobId");
    refused({ ...job(), attempt: 0 }, "attempt");
    refused({ ...job(), attempt: 1.5 }, "attempt");
    refused({ ...job(), callback: { ...job().callback, token: "short" } }, "callback.token");
    refused({ ...job(), callback: { ...job().callback, token: `${"t".repeat(20)} x` } }, "callback.token");
    refused({ ...job(), settings: { ...job().settings, mp4: "yes" } }, "settings.mp4");
    refused(
      { ...job(), settings: { ...job().settings, watermark: { position: "middle", opacity: 1 } } },
      "settings.watermark.position",
    );
    refused(
      { ...job(), settings: { ...job().settings, watermark: { position: "center", opacity: 1.01 } } },
      "settings.watermark.opacity",
    );
    refused(
      { ...job(), settings: { ...job().settings, watermark: { position: "center", opacity: -0.1 } } },
      "settings.watermark.opacity",
    );
  });

  it("refuses an empty, repeated or unknown resolution", () => {
    const settings = job().settings;
    refused({ ...job(), settings: { ...settings, enabledResolutions: [] } }, "settings.enabledResolutions");
    refused(
      { ...job(), settings: { ...settings, enabledResolutions: ["360p", "360p"] } },
      "settings.enabledResolutions",
    );
    refused({ ...job(), settings: { ...settings, enabledResolutions: ["4320p"] } }, "settings.enabledResolutions.0");
    refused({ ...job(), settings: { ...settings, enabledResolutions: "360p" } }, "settings.enabledResolutions");
  });

  it("refuses a base URL that is not plain http(s)", () => {
    for (const baseUrl of [
      "ftp://example.com/x",
      "/relative",
      "https://user:pass@example.com/x",
      "https://example.com/x?y=1",
      "https://example.com/x#y",
    ]) {
      refused({ ...job(), callback: { ...job().callback, baseUrl } }, "callback.baseUrl");
    }
  });
});

const ready = () => ({
  version: 1,
  jobId: "j1",
  attempt: 2,
  status: "ready",
  duration: 3.01,
  width: 640,
  height: 360,
  hasAudio: true,
  renditions: [{ resolution: "360p", width: 640, height: 360 }],
  files: ["360p/seg_00000.ts", "360p/index.m3u8", "master.m3u8", "video.mp4", "poster.jpg"],
  mp4: true,
  poster: "poster.jpg",
  peakMemoryBytes: 123456789,
});

describe("parseResult and parseHeartbeat", () => {
  it("accept what the encoder sends", () => {
    expect(parseResult(ready())).toEqual(ready());
    expect(parseResult({ ...ready(), peakMemoryBytes: null }).status).toBe("ready");
    const failed = {
      version: 1,
      jobId: "j1",
      attempt: 1,
      status: "failed",
      code: "invalid_source",
      message: "no video",
    };
    expect(parseResult(failed)).toEqual(failed);
    const beat = { version: 1, jobId: "j1", attempt: 1, stage: "encoding", progress: 0.5 };
    expect(parseHeartbeat(beat)).toEqual(beat);
  });

  it("refuse a result that is missing a file it promises, or has a path outside its folder", () => {
    expect(() => parseResult({ ...ready(), files: ["360p/index.m3u8", "poster.jpg", "video.mp4"] })).toThrow(/master/);
    expect(() => parseResult({ ...ready(), files: ready().files.filter((f) => f !== "video.mp4") })).toThrow(/video/);
    expect(() => parseResult({ ...ready(), files: [...ready().files, "../x"] })).toThrow(ProtocolError);
    expect(() => parseResult({ ...ready(), files: [...ready().files, "/abs"] })).toThrow(ProtocolError);
  });

  it("refuse unknown statuses, codes and fields", () => {
    expect(() => parseResult({ ...ready(), status: "done" })).toThrow(ProtocolError);
    expect(() => parseResult({ ...ready(), extra: 1 })).toThrow(/extra/);
    const failed = { version: 1, jobId: "j1", attempt: 1, status: "failed", code: "oops", message: "m" };
    expect(() => parseResult(failed)).toThrow(/code/);
    expect(() => parseResult({ ...failed, code: "encoding_failed", message: "a\nb" })).toThrow(/message/);
    expect(() => parseHeartbeat({ version: 1, jobId: "j1", attempt: 1, stage: "encoding", progress: 1.5 })).toThrow(
      /progress/,
    );
  });
});

describe("output paths and their types", () => {
  it("allow relative paths of plain names only", () => {
    expect(isOutputPath("720p/seg_00012.ts")).toBe(true);
    expect(isOutputPath("master.m3u8")).toBe(true);
    for (const bad of ["", "../x", "a/../b", "/x", "a//b", ".hidden", "a b", "a\\b"])
      expect(isOutputPath(bad)).toBe(false);
  });

  it("name each output's Content-Type", () => {
    expect(contentType("master.m3u8")).toBe("application/vnd.apple.mpegurl");
    expect(contentType("360p/seg_00000.ts")).toBe("video/mp2t");
    expect(contentType("video.mp4")).toBe("video/mp4");
    expect(contentType("poster.jpg")).toBe("image/jpeg");
    expect(() => contentType("x.exe")).toThrow(RangeError);
  });
});

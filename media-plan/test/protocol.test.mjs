// @ts-check
import { describe, expect, it } from "vitest";
import { planEncoding } from "../plan.mjs";
import {
  ProtocolError,
  parseHeartbeat,
  parseJob,
  parsePlan,
  parseResult,
  segmentIndex,
  segmentName,
} from "../protocol.mjs";
import { probed } from "./probes.mjs";

const plan = planEncoding(probed({ duration: 30, width: 1280, height: 720, frameRate: 25 }), {
  enabledResolutions: ["360p", "720p"],
  mp4: true,
  watermark: { position: "top-right", opacity: 0.5 },
});
const base = () => ({
  version: 2,
  jobId: "run-0-3",
  priority: "background",
  callback: {
    baseUrl: "https://api.example/internal/encoding/01JD0000000000000000000000/run-0-3",
    token: "t".repeat(32),
  },
});
const segments = () => ({ ...base(), kind: "segments", plan, from: 0, to: 4, renditions: ["360p", "720p"] });
/** A job of a file's part: the first part's, measuring, unless `fields` say otherwise. */
const filePart = (/** @type {"mp4" | "m4a"} */ kind, /** @type {Record<string, unknown>} */ fields = {}) => ({
  ...base(),
  kind,
  plan,
  partSize: 16 * 1024 * 1024,
  part: 1,
  from: 0,
  to: null,
  sequence: 1,
  origin: null,
  ...fields,
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
  it("accepts each kind of job as the Worker makes it", () => {
    expect(parseJob(segments())).toEqual(segments());
    expect(parseJob({ ...base(), kind: "probe", priority: "interactive" })).toMatchObject({ kind: "probe" });
    expect(parseJob({ ...base(), kind: "still", plan, time: 1, width: null })).toMatchObject({ kind: "still" });
    expect(parseJob({ ...base(), kind: "tiles", plan, from: 0, to: 3 })).toMatchObject({ kind: "tiles" });
    expect(parseJob({ ...base(), kind: "storyboard", plan })).toMatchObject({ kind: "storyboard" });
    expect(parseJob(filePart("mp4"))).toEqual(filePart("mp4"));
    expect(parseJob(filePart("m4a", { part: 2, from: 3, sequence: 7, origin: 1020000 }))).toMatchObject({ part: 2 });
    const audio = { ...base(), kind: "audio", plan, from: 2, to: 8 };
    expect(parseJob(audio)).toEqual(audio);
    // An added audio track may go with a silent video.
    expect(parseJob({ ...audio, plan: { ...plan, audio: false } })).toMatchObject({ kind: "audio" });
  });

  it("refuses unknown fields, other versions and kinds, and names the field", () => {
    refused({ ...segments(), extra: 1 }, "extra");
    refused({ ...segments(), version: 1 }, "version");
    refused({ ...segments(), kind: "transcode" }, "kind");
    refused({ ...segments(), priority: "urgent" }, "priority");
    refused({ ...segments(), jobId: "../x" }, "jobId");
    refused({ ...segments(), callback: { ...base().callback, baseUrl: "file:///etc/passwd" } }, "callback.baseUrl");
    refused({ ...segments(), callback: { ...base().callback, token: "short" } }, "callback.token");
  });

  it("refuses segment ranges outside the plan and renditions it does not have", () => {
    refused({ ...segments(), from: 4, to: 4 }, "to");
    refused({ ...segments(), to: 9 }, "to");
    refused({ ...segments(), renditions: ["1080p"] }, "renditions.0");
    refused({ ...segments(), renditions: ["360p", "360p"] }, "renditions");
    refused({ ...base(), kind: "audio", plan, from: 3, to: 3 }, "to");
    refused({ ...base(), kind: "audio", plan, from: 0, to: 9 }, "to");
    refused({ ...base(), kind: "audio", plan, from: 0, to: 1, renditions: ["360p"] }, "renditions");
  });

  it("reads a plan stored before clips as one with no offset, and refuses a negative one", () => {
    const { offset: _offset, ...older } = plan.source;
    expect(parsePlan({ ...plan, source: older }).source.offset).toBe(0);
    expect(parsePlan({ ...plan, source: { ...plan.source, offset: 12.5 } }).source.offset).toBe(12.5);
    expect(() => parsePlan({ ...plan, source: { ...plan.source, offset: -1 } })).toThrow(/plan.source.offset/);
  });

  it("checks the plan's shape and bounds", () => {
    refused({ ...segments(), plan: { ...plan, frames: 0 } }, "plan.frames");
    refused(
      { ...segments(), plan: { ...plan, source: { ...plan.source, format: "hls,applehttp" } } },
      "plan.source.format",
    );
    refused(
      { ...segments(), plan: { ...plan, watermark: { position: "middle", opacity: 1 } } },
      "plan.watermark.position",
    );
    refused(
      { ...segments(), plan: { ...plan, renditions: [{ ...plan.renditions[0], width: 40000 }] } },
      "plan.renditions.0.width",
    );
    refused({ ...base(), kind: "still", plan, time: 31, width: null }, "time");
    refused({ ...base(), kind: "still", plan, time: 1, width: 15 }, "width");
    refused({ ...base(), kind: "storyboard", plan, width: 240 }, "width");
    // Tiles within the storyboard's cues (a 30 s video has three).
    refused({ ...base(), kind: "tiles", plan, from: 2, to: 4 }, "to");
    refused({ ...base(), kind: "tiles", plan, from: 2, to: 2 }, "to");
    refused(filePart("mp4", { partSize: 60 * 1024 * 1024 }), "partSize");
    refused(filePart("m4a", { partSize: 1024 }), "partSize");
    refused(filePart("mp4", { part: 0 }), "part");
    refused(filePart("mp4", { to: 9 }), "to");
    // The first part starts at segment 0 and has no origin; every other part has one.
    refused(filePart("mp4", { origin: 0 }), "part");
    refused(filePart("mp4", { part: 2, from: 3 }), "part");
    refused(filePart("mp4", { part: 2, from: 0, origin: 5 }), "part");
    // A silent video has no M4A to make.
    refused(filePart("m4a", { plan: { ...plan, audio: false } }), "plan.audio");
  });
});

describe("parseHeartbeat and parseResult", () => {
  it("accept the encoder's messages and refuse malformed ones", () => {
    expect(parseHeartbeat({ version: 2, jobId: "p-1", progress: 0.5 })).toEqual({
      version: 2,
      jobId: "p-1",
      progress: 0.5,
    });
    expect(() => parseHeartbeat({ version: 2, jobId: "p-1", progress: 2 })).toThrow(ProtocolError);
    const probe = {
      format: "mov",
      duration: 3,
      startTime: 0,
      width: 640,
      height: 360,
      frameRate: 25,
      videoStream: 0,
      audioStream: null,
      interlaced: false,
    };
    expect(parseResult({ version: 2, jobId: "p-1", status: "done", probe })).toMatchObject({ probe });
    // The audio's language: left out by an older encoder (none), or an ISO 639 code.
    expect(parseResult({ version: 2, jobId: "p-1", status: "done", probe })).toMatchObject({
      probe: { audioLanguage: null },
    });
    const tagged = { ...probe, audioStream: 1, audioLanguage: "fra" };
    expect(parseResult({ version: 2, jobId: "p-1", status: "done", probe: tagged })).toMatchObject({ probe: tagged });
    expect(() =>
      parseResult({ version: 2, jobId: "p-1", status: "done", probe: { ...probe, audioLanguage: "French" } }),
    ).toThrow(ProtocolError);
    expect(parseResult({ version: 2, jobId: "s-1", status: "done" })).toEqual({
      version: 2,
      jobId: "s-1",
      status: "done",
    });
    const mp4 = { to: 4, fragments: [{ size: 1000, times: [0, 0] }], origin: 1020000, etag: "abc" };
    expect(parseResult({ version: 2, jobId: "m-1", status: "done", mp4 })).toMatchObject({ mp4 });
    expect(parseResult({ version: 2, jobId: "a-1", status: "done", m4a: { ...mp4, etag: null } })).toMatchObject({
      m4a: { etag: null },
    });
    expect(() => parseResult({ version: 2, jobId: "a-1", status: "done", m4a: { ...mp4, fragments: [] } })).toThrow(
      ProtocolError,
    );
    expect(() =>
      parseResult({ version: 2, jobId: "a-1", status: "done", m4a: { ...mp4, fragments: [{ size: 9, times: [] }] } }),
    ).toThrow(ProtocolError);
    const failed = { version: 2, jobId: "p-1", status: "failed", code: "invalid_source", message: "Not a video." };
    expect(parseResult(failed)).toEqual(failed);
    expect(() => parseResult({ ...failed, message: "line\nbreak" })).toThrow(ProtocolError);
    expect(() => parseResult({ ...failed, code: "oops" })).toThrow(ProtocolError);
    expect(() => parseResult({ version: 2, jobId: "p-1", status: "ready" })).toThrow(ProtocolError);
    expect(() => parseResult({ version: 2, jobId: "p-1", status: "done", probe: { ...probe, extra: 1 } })).toThrow(
      ProtocolError,
    );
  });
});

describe("segment names", () => {
  it("number segments with five digits, and read them back", () => {
    expect(segmentName(7)).toBe("seg_00007.ts");
    expect(segmentIndex("seg_00007.ts")).toBe(7);
    expect(segmentIndex("seg_7.ts")).toBeNull();
    expect(segmentIndex("../seg_00007.ts")).toBeNull();
  });
});

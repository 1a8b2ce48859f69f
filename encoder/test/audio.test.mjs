// @ts-check
// Added audio tracks (docs/audio-tracks.md) as the encoder makes them, against a fake Worker: a
// track's own file in, audio-only segments out, cut at the video's segments, checked with ffprobe
// packet by packet and heard (the dominant frequency of a decoded segment).

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AUDIO_FRAME,
  AUDIO_RATE,
  segmentCount,
  segmentSeconds,
  TIMESTAMP_BASE_SECONDS,
  timelineStart,
  trackAudioPacket,
} from "../../media-plan/plan.mjs";
import { segmentName } from "../../media-plan/protocol.mjs";
import { packetsSpan } from "../audio.mjs";
import { describeBinaries, runBinary } from "../binaries.mjs";
import { binaries, encoderHarness } from "./harness.mjs";
import { ffprobeJson, heardTone, writeTone } from "./media.mjs";

/** What a stored segment sounds like (media.mjs `heardTone`). @param {string} file */
const heard = (file) => heardTone(binaries.ffmpeg, file, `${file}.pcm`);

/** The audio packets of a stored segment, and its streams. @param {string} file */
async function packetsOf(file) {
  const probed =
    /** @type {{ streams: { codec_type: string, codec_name: string }[], packets?: Record<string, string>[] }} */ (
      await ffprobeJson(binaries.ffprobe, file, ["-show_streams", "-show_entries", "packet=pts_time,duration_time"])
    );
  return { streams: probed.streams, packets: probed.packets ?? [] };
}

describe(`audio tracks (${describeBinaries(binaries)})`, () => {
  const h = encoderHarness();
  const { run, planOf } = h;

  it("cuts a track longer than the video at the video's segments, on its timeline, as AAC that plays the track", async () => {
    // The video: 12 s of a 440 Hz tone at 25 fps (three 4 s segments); the track: 20 s of 880 Hz.
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const count = segmentCount(plan);
    expect(count).toBe(3);
    const track = await writeTone(binaries.ffmpeg, join(h.scratch, "fr.m4a"), 880, 20);
    // Two runs, as the coordinator sends them: the first segment, then the rest.
    for (const [from, to] of [
      [0, 1],
      [1, count],
    ]) {
      const { result } = await run(track, { kind: "audio", priority: "background", plan, from, to }, { video: "fr" });
      expect(result).toEqual({ version: 2, jobId: expect.any(String), status: "done" });
    }
    expect(h.fake.problems).toEqual([]);
    for (let index = 0; index < count; index++) {
      const file = h.fake.file("fr", `audio/${segmentName(index)}`);
      const { streams, packets } = await packetsOf(file);
      expect(streams.map((s) => [s.codec_type, s.codec_name])).toEqual([["audio", "aac"]]);
      // As long as the video's segment at its index (within 0.1 s; in fact within a packet or two).
      expect(Math.abs(packetsSpan(packets) - segmentSeconds(plan, index))).toBeLessThan(0.05);
      // On the video's timeline: its first packet is the plan's packet for the segment (with the
      // AAC priming packet just before it, in the first segment of a run, where this ffmpeg cannot
      // drop it).
      const first = Number(packets[0]?.pts_time);
      const opensRun = index === 0 || index === 1;
      const priming = binaries.features.dropPriming || !opensRun ? 0 : AUDIO_FRAME / AUDIO_RATE;
      const expected = timelineStart() + (trackAudioPacket(plan, index) * AUDIO_FRAME) / AUDIO_RATE - priming;
      expect(first).toBeCloseTo(expected, 3);
      expect(first).toBeGreaterThanOrEqual(TIMESTAMP_BASE_SECONDS);
      const sound = await heard(file);
      expect(sound.frequency).toBeGreaterThan(860);
      expect(sound.frequency).toBeLessThan(900);
    }
  });

  it("reads an MP3 file, on the same timeline", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const track = await writeTone(binaries.ffmpeg, join(h.scratch, "fr.mp3"), 880, 12);
    const job = { kind: "audio", priority: "background", plan, from: 1, to: 3 };
    expect((await run(track, job, { video: "mp3" })).result).toMatchObject({ status: "done" });
    for (const index of [1, 2]) {
      const file = h.fake.file("mp3", `audio/${segmentName(index)}`);
      const { packets } = await packetsOf(file);
      expect(Math.abs(packetsSpan(packets) - segmentSeconds(plan, index))).toBeLessThan(0.05);
      const sound = await heard(file);
      expect(sound.frequency).toBeGreaterThan(860);
      expect(sound.frequency).toBeLessThan(900);
    }
    // Its MPEG-TS timestamps are the video's, wherever the MP3's own timeline starts (its encoder delay).
    const first = Number((await packetsOf(h.fake.file("mp3", `audio/${segmentName(2)}`))).packets[0]?.pts_time);
    expect(first).toBeCloseTo(timelineStart() + (trackAudioPacket(plan, 2) * AUDIO_FRAME) / AUDIO_RATE, 2);
  });

  it("ends a shorter track in silence, and reads a WAV file", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const count = segmentCount(plan);
    const track = await writeTone(binaries.ffmpeg, join(h.scratch, "short.wav"), 880, 5);
    const { result } = await run(
      track,
      { kind: "audio", priority: "background", plan, from: 0, to: count },
      { video: "short" },
    );
    expect(result).toMatchObject({ status: "done" });
    const spoken = await heard(h.fake.file("short", `audio/${segmentName(0)}`));
    expect(spoken.frequency).toBeGreaterThan(860);
    expect(spoken.frequency).toBeLessThan(900);
    const last = h.fake.file("short", `audio/${segmentName(count - 1)}`);
    expect(Math.abs(packetsSpan((await packetsOf(last)).packets) - segmentSeconds(plan, count - 1))).toBeLessThan(0.05);
    // Past the track's end, silence (AAC leaves a whisper of noise at most).
    expect((await heard(last)).peak).toBeLessThan(64);
  });

  it("fails a file without audio, or one that is not media, as invalid_source at once", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const job = { kind: "audio", priority: "background", plan, from: 0, to: 1 };
    const silent = await run(h.sources.silent, job, { video: "silent" });
    expect(silent.result).toEqual({
      version: 2,
      jobId: expect.any(String),
      status: "failed",
      code: "invalid_source",
      message: "The file is not a decodable audio track: the file has no audio stream.",
    });
    expect(silent.job.stored).toEqual([]);
    const random = await run(h.sources.random, job, { video: "random" });
    expect(random.result).toMatchObject({ status: "failed", code: "invalid_source" });
  });

  it("reports the language its audio stream is tagged with, for the original's place in the list", async () => {
    const tagged = join(h.scratch, "tagged.mp4");
    const tagging = await runBinary(binaries.ffmpeg, [
      ...["-hide_banner", "-nostdin", "-v", "error", "-y", "-i", join(h.scratch, "landscape.mp4")],
      ...["-c", "copy", "-metadata:s:a:0", "language=fra", tagged],
    ]);
    expect(tagging.code, tagging.stderr).toBe(0);
    const probe = async (/** @type {Buffer} */ source) => {
      const { result } = await run(source, { kind: "probe" });
      return result.status === "done" ? result.probe?.audioLanguage : "failed";
    };
    expect(await probe(await readFile(tagged))).toBe("fra");
    // ffmpeg tags an MP4's streams "und" unless told: no language.
    expect(await probe(h.sources.landscape)).toBeNull();
  });
});

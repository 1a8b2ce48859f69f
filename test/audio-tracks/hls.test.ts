import { describe, expect, it } from "vitest";
import { audioBandwidth, planEncoding } from "../../media-plan/plan.mjs";
import { probed } from "../../media-plan/test/probes.mjs";
import { audioFile, audioRenditions } from "../../src/audio-tracks/hls";
import { masterPlaylist } from "../../src/playback/playlists";

/** Audio tracks in the master playlist (docs/audio-tracks.md), as pure functions. */
const settings = { enabledResolutions: ["360p", "720p"], mp4: false, watermark: null };
const GENERATION = "01JD6Q2V4Y9T3KX8M1N5P7R2S4";
const french = { language: "fr", label: "Français", generation: GENERATION };
const original = { language: "en", label: "Original", status: "ready" as const, default: true };

describe("the master playlist's audio renditions", () => {
  it("are none without a ready track: the master is as it always was", () => {
    const plan = planEncoding(probed(), settings);
    expect(audioRenditions(original, [], "")).toEqual([]);
    expect(masterPlaylist(plan, "", audioRenditions(original, [], ""))).toBe(masterPlaylist(plan));
  });

  it("put the original first, in the variants, and each track with its playlist; every variant names the group", () => {
    const plan = planEncoding(probed(), settings);
    const media = audioRenditions(original, [french], "?start=1&end=2");
    expect(media).toEqual([
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Original",LANGUAGE="en",AUTOSELECT=YES,DEFAULT=YES',
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Français",LANGUAGE="fr",AUTOSELECT=YES,DEFAULT=NO,URI="audio/${GENERATION}/index.m3u8?start=1&end=2"`,
    ]);
    const lines = masterPlaylist(plan, "", media).trimEnd().split("\n");
    expect(lines.slice(0, 5)).toEqual(["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS", ...media]);
    const variants = lines.filter((line) => line.startsWith("#EXT-X-STREAM-INF:"));
    expect(variants).toHaveLength(2);
    plan.renditions.forEach((r, i) => {
      // Its BANDWIDTH counts the track's segments beside its own (RFC 8216: any playable combination).
      expect(variants[i]).toBe(
        `#EXT-X-STREAM-INF:BANDWIDTH=${r.bandwidth + audioBandwidth()},RESOLUTION=${r.width}x${r.height},CODECS="${r.codecs}",FRAME-RATE=30.000,AUDIO="audio"`,
      );
    });
  });

  it("give a silent video's variants the AAC its tracks bring, and no original", () => {
    const plan = planEncoding(probed({ audioStream: null }), settings);
    expect(plan.renditions[0]?.codecs).not.toContain("mp4a");
    const media = audioRenditions(null, [french], "");
    expect(media).toHaveLength(1);
    expect(masterPlaylist(plan, "", media)).toContain(`CODECS="${plan.renditions[0]?.codecs},mp4a.40.2"`);
  });
});

describe("a track's files under /play/<x>/", () => {
  it("are named by the generation of the PUT that made them", () => {
    expect(audioFile(`audio/${GENERATION}/index.m3u8`)).toEqual({ generation: GENERATION, kind: "playlist" });
    expect(audioFile(`audio/${GENERATION}/seg_00012.ts`)).toEqual({
      generation: GENERATION,
      kind: "segment",
      name: "seg_00012.ts",
    });
    for (const path of [
      "audio/fr/index.m3u8",
      `audio/${GENERATION.toLowerCase()}/index.m3u8`,
      `audio/${GENERATION}/source`,
      `audio/${GENERATION}/seg_1.ts`,
      `audio/${GENERATION}/../360p/index.m3u8`,
    ]) {
      expect(audioFile(path), path).toBeNull();
    }
  });
});

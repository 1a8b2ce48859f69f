import { describe, expect, it } from "vitest";
import { cuesMeeting, escapeCueText, parseWebVtt } from "../../src/captions/webvtt";
import { chaptersTrack } from "../../src/chapters/track";

const cue = (start: number, end: number) => ({ start, end, settings: "", text: `${start}` });

describe("cuesMeeting", () => {
  const cues = [cue(0, 2500), cue(2500, 6000), cue(6000, 8000)];

  it("keeps the cues that end after the range starts and start before it ends", () => {
    expect(cuesMeeting(cues, { start: 3, end: 5 })).toEqual([cues[1]]);
    expect(cuesMeeting(cues, { start: 2.5, end: 6 })).toEqual([cues[1]]);
    expect(cuesMeeting(cues, { start: 2.499, end: 6.001 })).toEqual(cues);
    expect(cuesMeeting(cues, { start: 0, end: 8 })).toEqual(cues);
    expect(cuesMeeting(cues, { start: 8, end: 9 })).toEqual([]);
  });
});

describe("escapeCueText", () => {
  it("writes &, < and > as character references, and nothing else", () => {
    expect(escapeCueText("Q&A <b>bold</b> --> next")).toBe("Q&amp;A &lt;b&gt;bold&lt;/b&gt; --&gt; next");
    expect(escapeCueText("Olá, 世界 \"quoted\" 'single'")).toBe("Olá, 世界 \"quoted\" 'single'");
  });
});

describe("chaptersTrack", () => {
  const saved = {
    chapters: [
      { start: 0, title: "One" },
      { start: 1.5, title: "Two --> three" },
      { start: 4, title: "Past the end" },
    ],
    updatedAt: "2026-11-22T06:00:00.000Z",
  };

  it("is a WebVTT file our own strict reader takes, its cues to the next start and the last to the duration", () => {
    const track = chaptersTrack(saved, 4, null);
    expect(track?.lastModified).toBe(Date.parse(saved.updatedAt));
    const parsed = parseWebVtt(track?.text ?? "");
    expect(parsed).toEqual({
      ok: true,
      cues: [
        { start: 0, end: 1500, settings: "", text: "One" },
        { start: 1500, end: 4000, settings: "", text: "Two --&gt; three" },
      ],
    });
  });

  it("is nothing without chapters or a duration", () => {
    expect(chaptersTrack(null, 4, null)).toBeNull();
    expect(chaptersTrack(saved, null, null)).toBeNull();
  });
});

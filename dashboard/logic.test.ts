import { describe, expect, it } from "vitest";
import { barsOf, labelledIndexes, niceMax, windowOf } from "./analytics";
import { ApiFailure, failureOf, type Video } from "./api";
import { chapterFields, chaptersOf, newRow, parseSeconds, rowsOf } from "./chapters-form";
import { captionsType, embedCode, publicOriginOf } from "./embed";
import { listOf } from "./enums";
import { problemsOf } from "./errors";
import { formatDuration, formatMs, formatPercent, formatTime, formatWatchTime } from "./format";
import { parseRoute, paths } from "./route";
import { describePatch, draftOf, patchOf } from "./settings-form";
import { fingerprintOf, percentOf, titleOf } from "./uploads";
import { PageCursor, parseTags, summarize } from "./video-list";

const P = "01JD5Q3V7Y8N2M4K6P9R0S1T2V";
const V = "01JD5Q3V7Y8N2M4K6P9R0S1T2W";

describe("routes", () => {
  it("reads every view's path, and no other", () => {
    expect(parseRoute("/dashboard")).toEqual({ view: "home" });
    expect(parseRoute("/dashboard/")).toEqual({ view: "home" });
    expect(parseRoute("/dashboard/operator")).toEqual({ view: "operator" });
    expect(parseRoute(paths.account())).toEqual({ view: "account" });
    expect(parseRoute(paths.videos(P))).toEqual({ view: "videos", projectId: P });
    expect(parseRoute(paths.video(P, V))).toEqual({ view: "video", projectId: P, videoId: V });
    expect(parseRoute(paths.keys(P))).toEqual({ view: "keys", projectId: P });
    expect(parseRoute(paths.webhooks(P))).toEqual({ view: "webhooks", projectId: P });
    expect(parseRoute(paths.deliveries(P, V))).toEqual({ view: "deliveries", projectId: P, endpointId: V });
    expect(parseRoute(paths.settings(P))).toEqual({ view: "settings", projectId: P });
    expect(parseRoute(paths.analytics(P))).toEqual({ view: "analytics", projectId: P });
    for (const other of [
      "/dashboards",
      "/",
      "/dashboard/projects/short",
      "/dashboard/projects/x/nope",
      "/dashboard/x",
    ]) {
      expect(parseRoute(other), other).toEqual({ view: "missing" });
    }
  });
});

describe("errors next to their fields", () => {
  it("puts each details entry beside the field its path names, the rest above the form", () => {
    const failure = new ApiFailure(400, "invalid_body", "The body is invalid.", [
      { path: "url", message: "must be https" },
      { path: "eventTypes.1", message: "unknown type" },
      { path: "secret", message: "not a field here" },
    ]);
    expect(problemsOf(failure, ["url", "eventTypes"])).toEqual({
      form: "The body is invalid. not a field here",
      fields: { url: "must be https", eventTypes: "unknown type" },
    });
  });

  it("prefers the longest field a path falls under, and keeps the message when nothing is placed", () => {
    const failure = new ApiFailure(400, "invalid_encoding_settings", "Bad settings.", [
      { path: "watermark.opacity", message: "0 to 1" },
    ]);
    expect(problemsOf(failure, ["watermark", "watermark.opacity"]).fields).toEqual({ "watermark.opacity": "0 to 1" });
    expect(problemsOf(new ApiFailure(409, "email_taken", "That email is taken."), ["email"])).toEqual({
      form: "That email is taken.",
      fields: {},
    });
  });

  it("reads the API's error body, and any other answer as words", () => {
    const failure = failureOf(400, {
      error: { code: "invalid_body", message: "No.", details: [{ path: "url", message: "must be https" }] },
    });
    expect([failure.code, failure.message, failure.details]).toEqual([
      "invalid_body",
      "No.",
      [{ path: "url", message: "must be https" }],
    ]);
    expect(failureOf(403, { error: { code: "forbidden_origin", message: "No." } }).details).toEqual([]);
    for (const body of ["<html>", undefined]) {
      const bare = failureOf(502, body);
      expect(bare.code).toBe("http_502");
      expect(bare.message).toContain("HTTP 502");
    }
  });
});

describe("uploads", () => {
  it("titles a video with the file's name less its extension", () => {
    expect(titleOf("holiday.mp4")).toBe("holiday");
    expect(titleOf("my.clip.final.mov")).toBe("my.clip.final");
    expect(titleOf(".hidden")).toBe(".hidden");
    expect(titleOf("noext")).toBe("noext");
    expect(titleOf(`${"a".repeat(300)}.mp4`)).toHaveLength(200);
  });

  it("resumes the same file into the same project and mode only", () => {
    const file = { name: "a.mp4", size: 10, lastModified: 5 };
    expect(fingerprintOf(file, P, "live")).toBe(fingerprintOf({ ...file }, P, "live"));
    expect(fingerprintOf(file, P, "live")).not.toBe(fingerprintOf(file, P, "test"));
    expect(fingerprintOf(file, P, "live")).not.toBe(fingerprintOf(file, V, "live"));
    expect(fingerprintOf(file, P, "live")).not.toBe(fingerprintOf({ ...file, lastModified: 6 }, P, "live"));
  });

  it("reports whole percents up to 100", () => {
    expect([percentOf(0, 10), percentOf(5, 10), percentOf(9.99, 10), percentOf(10, 10), percentOf(0, 0)]).toEqual([
      0, 50, 99, 100, 100,
    ]);
  });
});

describe("the videos list", () => {
  it("pages forward and back by cursor", () => {
    const first = new PageCursor();
    expect(first.canGoBack).toBe(false);
    const second = first.forward("c2");
    const third = second.forward("c3");
    expect([second.current, third.current, third.back().current, third.back().back().current]).toEqual([
      "c2",
      "c3",
      "c2",
      null,
    ]);
    expect(first.back()).toBe(first);
  });

  it("writes each bulk item's result by title, the failed ones with their message", () => {
    const videos = [{ id: V, title: "Intro" } as Video];
    const outcome = summarize(
      "private",
      [
        { id: V.toLowerCase(), ok: true },
        { id: P, ok: false, error: { code: "video_not_found", message: "No such video." } },
      ],
      videos,
    );
    expect(outcome.lines).toEqual([
      { id: V.toLowerCase(), title: "Intro", ok: true, message: "Made private" },
      { id: P, title: P, ok: false, message: "Failed: No such video." },
    ]);
    expect(summarize("delete", [{ id: V, ok: true }], videos).lines[0]?.message).toBe("Deleted");
  });
});

describe("figures", () => {
  it("formats durations, times, watch time, milliseconds and ratios", () => {
    expect([formatDuration(null), formatDuration(5.4), formatDuration(65), formatDuration(3725)]).toEqual([
      "–",
      "0:05",
      "1:05",
      "1:02:05",
    ]);
    expect(formatTime("2026-11-22T06:00:00.000Z")).toBe("2026-11-22 06:00");
    expect([formatWatchTime(42), formatWatchTime(750), formatWatchTime(11_520)]).toEqual(["42 s", "12.5 min", "3.2 h"]);
    expect([formatMs(850), formatMs(1234), formatMs(null)]).toEqual(["850 ms", "1.2 s", "–"]);
    expect(formatPercent(0.0123)).toBe("1.2 %");
  });
});

describe("embed code and captions", () => {
  it("embeds the id, on the service's public origin, escaping the title", () => {
    const origin = publicOriginOf({
      thumbnail: { source: "auto", url: "https://media.example.com/thumbnails/a/b/c.jpg" },
    });
    expect(origin).toBe("https://media.example.com");
    const code = embedCode(origin, V, 'A "quoted" <title>');
    expect(code).toContain(`src="https://media.example.com/embed/${V}"`);
    expect(code).toContain('title="A &quot;quoted&quot; &lt;title>"');
    expect(code.startsWith("<iframe ")).toBe(true);
  });

  it("sends captions with their type by extension", () => {
    expect([captionsType("en.vtt"), captionsType("EN.SRT"), captionsType("notes.txt")]).toEqual([
      "text/vtt",
      "application/x-subrip",
      null,
    ]);
  });
});

describe("encoding settings", () => {
  const base = {
    enabledResolutions: ["360p", "720p", "1080p"] as ("360p" | "720p" | "1080p")[],
    mp4FallbackEnabled: false,
    outputCodecs: ["h264" as const],
    watermark: { enabled: false, position: "top-right" as const, opacity: 1, imageKey: null },
    updatedAt: "2026-11-22T06:00:00.000Z",
  };

  it("sends only what changed, resolutions sorted by height", () => {
    expect(patchOf(base, draftOf(base))).toEqual({});
    const draft = { ...draftOf(base), enabledResolutions: ["1080p" as const, "240p" as const], opacity: 0.5 };
    expect(patchOf(base, draft)).toEqual({ enabledResolutions: ["240p", "1080p"], watermark: { opacity: 0.5 } });
    expect(patchOf(base, { ...draftOf(base), enabledResolutions: ["1080p", "720p", "360p"] })).toEqual({});
  });

  it("writes a refused change out in words", () => {
    expect(
      describePatch({ enabledResolutions: ["240p"], mp4FallbackEnabled: true, watermark: { position: "center" } }),
    ).toBe("resolutions 240p; MP4 fallback on; watermark position center");
  });
});

describe("analytics charts", () => {
  const fixture = {
    views: 1234,
    watchTimeSeconds: 5400,
    startupTimeMs: { p50: 420, p95: 1800 },
    rebufferRatio: 0.012,
    errorViews: 3,
    renditions: [{ resolution: "720p", share: 0.75 }],
    series: [
      { start: "2026-11-20T00:00:00.000Z", views: 10, watchTimeSeconds: 600 },
      { start: "2026-11-21T00:00:00.000Z", views: 0, watchTimeSeconds: 0 },
      { start: "2026-11-22T00:00:00.000Z", views: 37, watchTimeSeconds: 4800 },
    ],
    topVideos: [{ videoId: V, title: "Intro", views: 40, watchTimeSeconds: 5000 }],
  };

  it("scales bars to a round top, in proportion, with dates or hours as labels", () => {
    expect([niceMax(0), niceMax(7), niceMax(37), niceMax(100), niceMax(101), niceMax(4800)]).toEqual([
      1, 10, 50, 100, 200, 5000,
    ]);
    const { bars, max } = barsOf(
      fixture.series.map((point) => ({ start: point.start, value: point.views })),
      300,
      100,
    );
    expect(max).toBe(50);
    expect(bars.map((bar) => bar.height)).toEqual([20, 0, 74]);
    expect(bars.map((bar) => bar.y)).toEqual([80, 100, 26]);
    expect(bars.map((bar) => bar.label)).toEqual(["11-20", "11-21", "11-22"]);
    expect(bars[1]?.x).toBeGreaterThan((bars[0]?.x ?? 0) + (bars[0]?.width ?? 0));
    const hourly = barsOf(
      [
        { start: "2026-11-22T05:00:00.000Z", value: 1 },
        { start: "2026-11-22T06:00:00.000Z", value: 2 },
      ],
      100,
      10,
    );
    expect(hourly.bars.map((bar) => bar.label)).toEqual(["05:00", "06:00"]);
  });

  it("labels as many bars as fit, always the last", () => {
    expect([...labelledIndexes(7, 600)]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const ninety = labelledIndexes(90, 600);
    expect(ninety.has(0) && ninety.has(89)).toBe(true);
    expect(ninety.size).toBeLessThanOrEqual(16);
  });

  it("asks for the last 7 days by day", () => {
    expect(windowOf(new Date("2026-11-22T06:00:00.000Z"))).toEqual({
      from: "2026-11-15T06:00:00.000Z",
      to: "2026-11-22T06:00:00.000Z",
      interval: "day",
    });
  });
});

describe("the videos list's filters", () => {
  it("reads tags as typed: split at commas, trimmed, empty ones and repeats dropped", () => {
    expect(parseTags(" launch, ads,,launch , ")).toEqual(["launch", "ads"]);
    expect(parseTags("")).toEqual([]);
  });
});

describe("the chapters editor", () => {
  it("reads a start typed as seconds or as minutes:seconds, and nothing else", () => {
    expect(parseSeconds(" 90 ")).toBe(90);
    expect(parseSeconds("62.5")).toBe(62.5);
    expect(parseSeconds("1:30")).toBe(90);
    expect(parseSeconds("1:02.345")).toBe(62.345);
    expect(parseSeconds("1:02:03.5")).toBe(3723.5);
    expect(parseSeconds("90:00")).toBe(5400);
    for (const bad of ["", "abc", "-1", "1:60", "1:60:00", "1::2", "1e3", "0x10", ".5"]) {
      expect(parseSeconds(bad), bad).toBeNull();
    }
  });

  it("sends the rows as typed, the titles untouched, or names the start it cannot read", () => {
    const rows = [newRow(true), { ...newRow(false), start: "1:30", title: " Setup " }];
    expect(rows[0]?.start).toBe("0");
    expect(chaptersOf(rows)).toEqual({
      chapters: [
        { start: 0, title: "" },
        { start: 90, title: " Setup " },
      ],
    });
    expect(chaptersOf([...rows, { ...newRow(false), start: "soon" }])).toEqual({
      problems: {
        form: null,
        fields: { "chapters.2.start": "Type the start in seconds (90) or as minutes:seconds (1:30)." },
      },
    });
  });

  it("shows saved chapters as rows with their own keys, and puts each refusal next to its row's field", () => {
    const rows = rowsOf([
      { start: 0, title: "Intro" },
      { start: 62.5, title: "Setup" },
    ]);
    expect(rows.map((row) => [row.start, row.title])).toEqual([
      ["0", "Intro"],
      ["62.5", "Setup"],
    ]);
    expect(new Set(rows.map((row) => row.key)).size).toBe(2);
    const refusal = new ApiFailure(400, "invalid_body", "The request body is not valid.", [
      { path: "chapters.1.start", message: "must be after the chapter before it (0 s)" },
      { path: "chapters", message: "must hold at most 100 chapters" },
    ]);
    expect(problemsOf(refusal, chapterFields(2))).toEqual({
      form: null,
      fields: {
        "chapters.1.start": "must be after the chapter before it (0 s)",
        chapters: "must hold at most 100 chapters",
      },
    });
  });
});

describe("the API's enumerations", () => {
  type Union = "a" | "b";

  it("lists a union's values from a record of them all, which the type check holds to the union", () => {
    expect(listOf<Union>({ b: true, a: true })).toEqual(["b", "a"]);
    // @ts-expect-error: a value the API removed (or never had) is refused.
    listOf<Union>({ a: true, b: true, c: true });
    // @ts-expect-error: a value the API added, and the list lacks, is refused.
    listOf<Union>({ a: true });
  });
});

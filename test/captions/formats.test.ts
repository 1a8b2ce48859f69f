import { describe, expect, it } from "vitest";
import { parseSubRip } from "../../src/captions/subrip";
import {
  type Cue,
  cuesMeeting,
  formatTimestamp,
  parseWebVtt,
  toWebVtt,
  webVttMeeting,
} from "../../src/captions/webvtt";

const problem = (parsed: ReturnType<typeof parseWebVtt>) => (parsed.ok ? "(parsed)" : parsed.problem);

describe("WebVTT", () => {
  it("reads cues: identifiers, settings, multi-line text, comments, style and region blocks", () => {
    const parsed = parseWebVtt(
      [
        "WEBVTT - a title",
        "Kind: captions",
        "Language: en",
        "",
        "STYLE",
        "::cue { color: yellow }",
        "",
        "REGION",
        "id:fred width:40% lines:3",
        "",
        "NOTE a comment",
        "over two lines",
        "",
        "intro",
        "00:00:01.000 --> 00:00:02.500 align:start position:10%,line-left line:-2 size:80%",
        "<v Ada>Hello,</v>",
        "world & <i>all</i>",
        "",
        "00:02.500 --> 00:04.000 region:fred vertical:rl",
        "No hours",
        "",
        "00:00:04.000 --> 00:00:04.000",
        "",
      ].join("\n"),
    );
    expect(parsed).toEqual({
      ok: true,
      cues: [
        {
          start: 1000,
          end: 2500,
          settings: "align:start position:10%,line-left line:-2 size:80%",
          text: "<v Ada>Hello,</v>\nworld & <i>all</i>",
        },
        { start: 2500, end: 4000, settings: "region:fred vertical:rl", text: "No hours" },
        { start: 4000, end: 4000, settings: "", text: "" },
      ],
    });
  });

  it("takes a byte order mark, CRLF and CR line ends, and a file of no cues", () => {
    const crlf = "\ufeffWEBVTT\r\n\r\n00:00:01.000 --> 00:00:02.000\r\nOne\r\ntwo\r\n";
    expect(parseWebVtt(crlf)).toEqual({ ok: true, cues: [{ start: 1000, end: 2000, settings: "", text: "One\ntwo" }] });
    expect(parseWebVtt("WEBVTT\r\r00:01.000 --> 00:02.000\rCR only")).toEqual({
      ok: true,
      cues: [{ start: 1000, end: 2000, settings: "", text: "CR only" }],
    });
    expect(parseWebVtt("WEBVTT")).toEqual({ ok: true, cues: [] });
    expect(parseWebVtt("WEBVTT\n\n")).toEqual({ ok: true, cues: [] });
  });

  it("reads hours up to 99, in two digits", () => {
    expect(parseWebVtt("WEBVTT\n\n98:59:59.999 --> 99:59:59.999\nlate")).toEqual({
      ok: true,
      cues: [{ start: 356_399_999, end: 359_999_999, settings: "", text: "late" }],
    });
  });

  it.each([
    ["", "starts with"],
    ["WEBVTTX\n", "starts with"],
    ["webvtt\n", "starts with"],
    ["\ufeff\ufeffWEBVTT\n", "starts with"],
    ["1\n00:00:01,000 --> 00:00:02,000\nSubRip\n", "starts with"],
    ["WEBVTT\n00:00:01.000 --> 00:00:02.000\nno blank line\n", "line 2: a blank line must separate"],
    ["WEBVTT\n\n00:00:01.000 -> 00:00:02.000\nx", "line 3: expected a cue"],
    ["WEBVTT\n\nhello\nthere\n", "line 3: expected a cue"],
    ["WEBVTT\n\n00:00:01,000 --> 00:00:02,000\ncomma", "line 3"],
    ["WEBVTT\n\n00:00:01.00 --> 00:00:02.000\ntwo fraction digits", "line 3"],
    ["WEBVTT\n\n00:00:01.0000 --> 00:00:02.000\nfour fraction digits", "line 3"],
    ["WEBVTT\n\n0:00:01.000 --> 0:00:02.000\none hour digit", "line 3"],
    ["WEBVTT\n\n99:59:59.999 --> 100:00:00.000\nhour 100", "line 3: hours are written in two digits, at most 99"],
    ["WEBVTT\n\n000:00:01.000 --> 00:00:02.000\nthree hour digits", "line 3: hours are written in two digits"],
    [`WEBVTT\n\n${"9".repeat(400)}:00:01.000 --> 00:00:02.000\n400 hour digits`, "(400 characters)"],
    ["WEBVTT\n\n00:60:01.000 --> 00:61:02.000\nminute 60", "line 3"],
    ["WEBVTT\n\n00:00:60.000 --> 00:00:61.000\nsecond 60", "line 3"],
    ["WEBVTT\n\n00:00:01.000-->00:00:02.000\nno spaces", "line 3"],
    ["WEBVTT\n\nx00:00:01.000 --> 00:00:02.000\njunk before", "line 3"],
    ["WEBVTT\n\n00:00:02.000 --> 00:00:01.000\nbackwards", "line 3: the cue ends before it starts"],
    [
      "WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nb\n\n00:00:04.000 --> 00:00:07.000\na",
      "line 6: the cue starts before the cue before it",
    ],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000 color:red\nx", 'unknown cue setting "color:red"'],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000 align\nx", 'unknown cue setting "align"'],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000 align:top\nx", 'bad value in cue setting "align:top"'],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000 position:150%\nx", "percentage over 100%"],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000 size:50% size:60%\nx", 'cue setting "size" given twice'],
    [
      "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\none\n00:00:03.000 --> 00:00:04.000\ntwo",
      'line 5: "-->" inside a cue\'s text',
    ],
    ["WEBVTT\n\nNOTE\n00:00:01.000 --> 00:00:02.000\nx", 'line 4: "-->" inside a NOTE block'],
    [
      "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nx\n\nSTYLE\n::cue {}",
      "line 6: STYLE blocks must come before the first cue",
    ],
  ])("refuses %j", (text, expected) => {
    expect(problem(parseWebVtt(text))).toContain(expected);
  });

  it("writes cues back with every hour, settings and text as they were", () => {
    const cues = [
      { start: 0, end: 1500, settings: "", text: "a\nb" },
      { start: 359_999_998, end: 359_999_999, settings: "align:end", text: "" },
    ];
    const text = toWebVtt(cues);
    expect(text).toBe("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\na\nb\n\n99:59:59.998 --> 99:59:59.999 align:end\n");
    expect(parseWebVtt(text)).toEqual({ ok: true, cues });
    expect(formatTimestamp(3_723_004)).toBe("01:02:03.004");
  });
});

describe("cues meeting a range", () => {
  const cue = (start: number, end: number): Cue => ({ start, end, settings: "", text: `${start}-${end}` });

  it("keeps the cues that end after the range starts and start before it ends", () => {
    const cues = [
      cue(0, 2000),
      cue(5000, 8000),
      cue(5000, 8500),
      cue(8000, 9000),
      cue(11_000, 13_000),
      cue(12_000, 14_000),
    ];
    expect(cuesMeeting(cues, { start: 8, end: 12 }).map((kept) => kept.text)).toEqual([
      "5000-8500",
      "8000-9000",
      "11000-13000",
    ]);
    // Compared in seconds, whatever binary fractions make of them: a cue ending at 4.35 s does not meet 4.35–5.
    expect(cuesMeeting([cue(4000, 4350), cue(4000, 4351)], { start: 4.35, end: 5 }).map((kept) => kept.end)).toEqual([
      4351,
    ]);
    // A cue of no length meets a range it lies inside.
    expect(cuesMeeting([cue(9000, 9000)], { start: 8, end: 12 })).toHaveLength(1);
    expect(cuesMeeting([], { start: 0, end: 1 })).toEqual([]);
  });

  it("cuts a stored file to a range: header, style sheets and regions as written, the cues that meet it, no comments", () => {
    const vtt = [
      "\ufeffWEBVTT - a title",
      "Kind: captions",
      "",
      "STYLE",
      "::cue { color: yellow }",
      "",
      "REGION",
      "id:top",
      "",
      "NOTE written by hand",
      "",
      "00:00.000 --> 00:02.000",
      "before",
      "",
      "one",
      "00:00:05.000 --> 00:00:08.000",
      "ends where the range starts",
      "",
      "two",
      "00:00:05.000 --> 00:00:08.500 region:top line:10%",
      "reaches in",
      "on two lines",
      "",
      "NOTE between cues",
      "",
      "00:00:11.000 --> 00:00:13.000",
      "reaches out",
      "",
      "00:00:12.000 --> 00:00:14.000",
      "starts where it ends",
    ].join("\r\n");
    expect(parseWebVtt(vtt).ok).toBe(true);
    const cut = webVttMeeting(vtt, { start: 8, end: 12 });
    expect(cut).toBe(
      [
        "WEBVTT - a title",
        "Kind: captions",
        "",
        "STYLE",
        "::cue { color: yellow }",
        "",
        "REGION",
        "id:top",
        "",
        "two",
        "00:00:05.000 --> 00:00:08.500 region:top line:10%",
        "reaches in",
        "on two lines",
        "",
        "00:00:11.000 --> 00:00:13.000",
        "reaches out",
        "",
      ].join("\n"),
    );
    // What it keeps is what cuesMeeting keeps of the same file.
    const all = parseWebVtt(vtt);
    const kept = parseWebVtt(cut);
    if (!all.ok || !kept.ok) throw new Error("unparsed");
    expect(kept.cues).toEqual(cuesMeeting(all.cues, { start: 8, end: 12 }));
    expect(webVttMeeting("WEBVTT\n", { start: 0, end: 1 })).toBe("WEBVTT\n");
    expect(webVttMeeting("WEBVTT", { start: 0, end: 1 })).toBe("WEBVTT\n");
  });
});

describe("SubRip", () => {
  it("reads numbered cues, multi-line text, CRLF, a byte order mark and blank lines of spaces", () => {
    const text =
      "\ufeff1\r\n00:00:01,000 --> 00:00:02,500\r\nHello,\r\n<i>world</i>\r\n  \r\n2\r\n00:00:02,500 --> 00:00:04,000  X1:40 X2:600 Y1:20 Y2:50\r\nAda & Bob\r\n\r\n\r\n";
    expect(parseSubRip(text)).toEqual({
      ok: true,
      cues: [
        { start: 1000, end: 2500, settings: "", text: "Hello,\n<i>world</i>" },
        { start: 2500, end: 4000, settings: "", text: "Ada & Bob" },
      ],
    });
  });

  it("converts to WebVTT with the same cues and the same text", () => {
    const srt = "1\n00:00:01,250 --> 00:00:03,000\n- Who's there?\n- Me.\n\n2\n99:00:00,000 --> 99:00:01,000\nlate\n";
    const parsed = parseSubRip(srt);
    if (!parsed.ok) throw new Error(parsed.problem);
    const vtt = toWebVtt(parsed.cues);
    expect(vtt).toBe(
      "WEBVTT\n\n00:00:01.250 --> 00:00:03.000\n- Who's there?\n- Me.\n\n99:00:00.000 --> 99:00:01.000\nlate\n",
    );
    expect(parseWebVtt(vtt)).toEqual(parsed);
  });

  it.each([
    ["", "no cues"],
    ["\n \n", "no cues"],
    ["WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nx", "line 1: expected a cue number"],
    ["1\n00:00:01.000 --> 00:00:02.000\ndots", "line 2"],
    ["1\n0:00:01,000 --> 0:00:02,000\none hour digit", "line 2"],
    ["1\n99999999999999:00:00,001 --> 99999999999999:00:01,000\nfar", "line 2: hours are written in two digits"],
    [`1\n${"4".repeat(400)}:00:00,000 --> 00:00:01,000\nfar`, "line 2: hours are written in two digits"],
    ["1\n100:00:00,000 --> 100:00:01,000\nhour 100", "line 2: hours are written in two digits, at most 99"],
    ["1\n00:00:01,000 --> 00:00:02,00\ntwo fraction digits", "line 2"],
    ["1\n00:00:01,000 --> 00:00:02,000 align:start\nsettings", "line 2"],
    ["1\nHello\n", "line 2"],
    ["1\n00:00:02,000 --> 00:00:01,000\nbackwards", "line 2: the cue ends before it starts"],
    ["1\n00:00:05,000 --> 00:00:06,000\nb\n\n2\n00:00:04,000 --> 00:00:05,000\na", "line 6: the cue starts before"],
    ["1\n00:00:01,000 --> 00:00:02,000\none\n2\n00:00:03,000 --> 00:00:04,000\ntwo", 'line 5: "-->" inside'],
    ["1\n00:00:01,000 --> 00:00:02,000\none\n\ntwo", "line 5: expected a cue number"],
  ])("refuses %j", (text, expected) => {
    const parsed = parseSubRip(text);
    expect(parsed.ok ? "(parsed)" : parsed.problem).toContain(expected);
  });
});

/**
 * Caption files made to be slow to read (docs/captions-and-embed.md: parsing takes time in proportion to the
 * file's size, whatever its content). Each is close to the 2 MiB limit. Used by the captions tests
 * (what each answer is) and by scripts/bench-captions.ts (how long each takes). Self-contained, so
 * that Node runs it as it is.
 */

/** The size of each file: the upload limit, less room for the lines around the long run. */
export const HOSTILE_BYTES = 2 * 1024 * 1024 - 256;

const run = (unit: string, bytes = HOSTILE_BYTES) => unit.repeat(Math.floor(bytes / unit.length));
const digits = () => run("1");
const VTT_TIMING = "00:00:01.000 --> 00:00:02.000";

export type HostileCaptions = {
  name: string;
  type: "text/vtt" | "application/x-subrip";
  body: string;
  /** Whether the file is well-formed (200) or refused (400 invalid_captions). */
  valid: boolean;
};

export function hostileCaptions(): HostileCaptions[] {
  const vtt = (name: string, body: string, valid = false): HostileCaptions => ({ name, type: "text/vtt", body, valid });
  const srt = (name: string, body: string, valid = false): HostileCaptions => ({
    name,
    type: "application/x-subrip",
    body,
    valid,
  });
  const cueCount = Math.floor(HOSTILE_BYTES / 64);
  const pad = (n: number) => String(n).padStart(2, "0");
  const vttCue = (i: number) => `${pad(Math.floor(i / 3600) % 100)}:${pad(Math.floor(i / 60) % 60)}:${pad(i % 60)}.000`;
  const srtTime = (i: number) => `${vttCue(i).replace(".", ",")}`;
  return [
    vtt("line: and 2 MiB of digits", `WEBVTT\n\n${VTT_TIMING} line:${digits()}\nx\n`, true),
    vtt("region: and 2 MiB of digits", `WEBVTT\n\n${VTT_TIMING} region:${digits()}\nx\n`, true),
    vtt("position: and 2 MiB of digits", `WEBVTT\n\n${VTT_TIMING} position:${digits()}.5\nx\n`),
    vtt("size: of digits and a dot", `WEBVTT\n\n${VTT_TIMING} size:${run("1.")}%\nx\n`),
    vtt("hours of 2 MiB of digits", `WEBVTT\n\n${digits()}:00:01.000 --> 00:00:02.000\nx\n`),
    vtt("a timing line of spaces", `WEBVTT\n\n00:00:01.000${run(" ")}x\n`),
    vtt("settings of spaces", `WEBVTT\n\n${VTT_TIMING}${run(" ")}\nx\n`, true),
    vtt("one line of arrows", `WEBVTT\n\n${VTT_TIMING}\n${run("-->")}\n`),
    vtt("one text line of 2 MiB", `WEBVTT\n\n${VTT_TIMING}\n${run("a")}\n`, true),
    vtt("2 MiB of line ends", `WEBVTT\n${run("\n")}`, true),
    vtt("2 MiB of CRs", `WEBVTT${run("\r")}`, true),
    vtt("a header of 2 MiB", `WEBVTT ${run("x")}\n`, true),
    vtt("many settings", `WEBVTT\n\n${VTT_TIMING} ${run("align:start ")}\nx\n`),
    vtt("a NOTE of many lines", `WEBVTT\n\nNOTE\n${run("x\n")}`, true),
    vtt(
      "tens of thousands of cues",
      `WEBVTT\n\n${Array.from({ length: cueCount }, (_, i) => `${vttCue(i)} --> ${vttCue(i + 1)}\ncue ${i}`).join("\n\n")}\n`,
      true,
    ),
    srt("hours of 2 MiB of digits", `1\n${digits()}:00:01,000 --> 00:00:02,000\nx\n`),
    srt("a cue number of 2 MiB of digits", `${digits()}\n00:00:01,000 --> 00:00:02,000\nx\n`, true),
    srt("a timing line of spaces", `1\n00:00:01,000${run(" ")}x\n`),
    srt("blank lines of spaces", `1\n00:00:01,000 --> 00:00:02,000\nx\n${run(" \n")}`, true),
    srt("a box of digits", `1\n00:00:01,000 --> 00:00:02,000 X1:${digits()}\nx\n`),
    srt(
      "tens of thousands of cues",
      `${Array.from({ length: cueCount }, (_, i) => `${i + 1}\n${srtTime(i)} --> ${srtTime(i + 1)}\ncue ${i}`).join("\n\n")}\n`,
      true,
    ),
  ];
}

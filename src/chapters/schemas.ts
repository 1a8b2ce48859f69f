import { z } from "@hono/zod-openapi";
import { MAX_DURATION_SECONDS } from "../../media-plan/plan.mjs";
import { textSchema } from "../http/schemas";
import { isPlaylistText } from "../lib/playlist-text";
import { MAX_CHAPTERS, MAX_TITLE_LENGTH } from "./model";

const EXAMPLE = [
  { start: 0, title: "Introduction" },
  { start: 62.5, title: "Setting up" },
  { start: 180, title: "Q&A" },
];

/** Whether a number of seconds is whole milliseconds, as WebVTT's cue times are. */
const wholeMilliseconds = (seconds: number) => Math.round(seconds * 1000) / 1000 === seconds;

const StartSchema = z
  .number()
  .min(0, "must be 0 or more seconds")
  // No video is longer (a longer source is refused as invalid_source).
  .lt(MAX_DURATION_SECONDS, `must be below ${MAX_DURATION_SECONDS} seconds (12 hours)`)
  .refine(wholeMilliseconds, "must be in whole milliseconds (at most 3 decimal places)")
  .openapi({
    description:
      "Where the chapter starts, in seconds (whole milliseconds): the first chapter at 0, each after the one " +
      "before it, each below the video's duration once that is known",
    example: 62.5,
  });

/**
 * A chapter's title: text under the API's rules for text (well-formed, no control character) and
 * without a line or paragraph separator (U+2028, U+2029), which some players split lines on.
 */
const TitleSchema = textSchema()
  // Before trimming, which would drop a separator at either end unseen.
  .refine(isPlaylistText, "must not hold a line or paragraph separator (U+2028, U+2029)")
  .trim()
  .min(1, "must not be empty")
  .max(MAX_TITLE_LENGTH, `must be at most ${MAX_TITLE_LENGTH} characters`)
  .openapi({
    description: `1–${MAX_TITLE_LENGTH} characters (trimmed), no control character, line or paragraph separator`,
    example: "Setting up",
  });

export const ChapterSchema = z.strictObject({ start: StartSchema, title: TitleSchema }).openapi("Chapter");

/** A list as PUT takes it: the order rules across its chapters, each refused chapter named. */
const ChapterListSchema = z
  .array(ChapterSchema)
  .min(1, `must hold 1 to ${MAX_CHAPTERS} chapters (DELETE removes them all)`)
  .max(MAX_CHAPTERS, `must hold at most ${MAX_CHAPTERS} chapters`)
  .superRefine((chapters, context) => {
    chapters.forEach((chapter, index) => {
      const previous = chapters[index - 1];
      if (!previous && chapter.start !== 0) {
        context.addIssue({ code: "custom", path: [index, "start"], message: "the first chapter must start at 0" });
      }
      if (previous && chapter.start <= previous.start) {
        context.addIssue({
          code: "custom",
          path: [index, "start"],
          message: `must be after the chapter before it (${previous.start} s)`,
        });
      }
    });
  });

export const ChaptersRequestSchema = z
  .strictObject({ chapters: ChapterListSchema })
  .openapi("ChaptersRequest", { example: { chapters: EXAMPLE } });

export const ChaptersSchema = z
  .object({
    chapters: z.array(ChapterSchema).openapi({
      description:
        "The chapters the video shows, in order; empty when it has none. A chapter saved before the video's " +
        "duration was known, that starts at or past it, is not shown",
    }),
  })
  .openapi("Chapters", { example: { chapters: EXAMPLE } });

import { z } from "@hono/zod-openapi";
import { pathId, textSchema } from "../http/schemas";
import { MAX_LANGUAGE_LENGTH, MIN_LANGUAGE_LENGTH } from "../lib/language";
import { isQuotedString } from "../lib/playlist-text";
import { ProjectQuerySchema } from "../videos/schemas";
import { CAPTION_ERROR_CODES, CAPTION_SOURCES, CAPTION_STATUSES } from "./model";

export const TrackSchema = z
  .object({
    language: z.string().openapi({ description: "BCP 47, in its canonical case", example: "pt-BR" }),
    label: z.string().openapi({ description: "The name players show for the track", example: "Brazilian Portuguese" }),
    source: z.enum(CAPTION_SOURCES).openapi({
      description: "`upload`: put through this API; `generated`: heard from the video's speech",
    }),
    status: z.enum(CAPTION_STATUSES).openapi({
      description:
        "An uploaded track is `ready`. A generated one is `processing` while its speech is heard, then `ready`, " +
        "`errored` (see `error`) or `skipped` (the video has no audio, or no speech was heard). Only a `ready` track " +
        "plays: in the master playlist, on the embed page, at its `url`",
    }),
    url: z.string().openapi({
      format: "uri",
      description:
        "The WebVTT file (`/play/<videoId>/captions/<language>.vtt`; a playback token in place of the id for a private video)",
    }),
    error: z
      .strictObject({ code: z.enum(CAPTION_ERROR_CODES), message: z.string() })
      .optional()
      .openapi({ description: "Why a generated track errored; only on an `errored` track" }),
  })
  .openapi("CaptionTrack");

export const TrackListSchema = z.object({ data: z.array(TrackSchema) }).openapi("CaptionTrackList");

export const CaptionParamsSchema = z.object({
  id: pathId("video"),
  language: z.string().openapi({
    description: `A BCP 47 language tag (\`en\`, \`pt-BR\`, \`zh-Hant\`): ${MIN_LANGUAGE_LENGTH}–${MAX_LANGUAGE_LENGTH} letters, digits and hyphens, compared case-insensitively`,
    example: "pt-BR",
    pattern: `^[A-Za-z0-9-]{${MIN_LANGUAGE_LENGTH},${MAX_LANGUAGE_LENGTH}}$`,
  }),
});

/**
 * A track's label goes into the master playlist as an HLS quoted-string: no `"`, and no line end of
 * any kind a player splits lines on (U+2028, U+2029 included; lib/playlist-text.ts).
 */
export const LabelSchema = textSchema()
  // Before trimming, which would drop a separator at either end unseen.
  .refine(isQuotedString, 'must not hold a double quote ("), a line or paragraph separator or a control character')
  .trim()
  .min(1)
  .max(100)
  .openapi({
    description:
      'The name players show (1–100 characters, no `"`, line or paragraph separator (U+2028, U+2029) or control ' +
      "character); default the language's English name",
    example: "Brazilian Portuguese",
  });

export const CaptionQuerySchema = ProjectQuerySchema.extend({ label: LabelSchema.optional() });

/** `POST …/captions/{language}/generate`: the body may be left out; `label` as the upload's `?label=`. */
export const GenerateRequestSchema = z
  .strictObject({
    label: LabelSchema.optional().openapi({
      description: 'The name players show; default the language\'s English name followed by " (auto-generated)"',
      example: "English (auto-generated)",
    }),
  })
  .openapi("GenerateCaptionsRequest");

import { z } from "@hono/zod-openapi";
import { CaptionParamsSchema, LabelSchema } from "../captions/schemas";
import { ProjectQuerySchema } from "../videos/schemas";
import { AUDIO_TRACK_ERROR_CODES, AUDIO_TRACK_STATUSES, MAX_AUDIO_TRACKS } from "./model";

export const AudioTrackSchema = z
  .object({
    language: z.string().openapi({
      description: "BCP 47, in its canonical case; the original's is its audio stream's tag, else `und`",
      example: "fr",
    }),
    label: z.string().openapi({ description: "The name players show for the track", example: "French" }),
    status: z.enum(AUDIO_TRACK_STATUSES).openapi({
      description:
        "The original is `ready`. An added track is `processing` while its segments are made, then `ready` (it " +
        "plays: in the master playlist and the embed page's audio menu) or `errored` (see `error`)",
    }),
    default: z.boolean().openapi({
      description: "Whether players start with it: the original (the source's own audio) only",
    }),
    error: z
      .strictObject({ code: z.enum(AUDIO_TRACK_ERROR_CODES), message: z.string() })
      .optional()
      .openapi({
        description:
          "Why an added track errored, only on an `errored` track: `invalid_source` (its file has no audio stream, " +
          "or does not decode), `encoding_failed` (its work failed three times)",
      }),
  })
  .openapi("AudioTrack");

export const AudioTrackListSchema = z
  .object({
    data: z.array(AudioTrackSchema).openapi({
      description: `The source's own audio first (when it has any), then the added tracks by language; at most ${MAX_AUDIO_TRACKS}`,
    }),
  })
  .openapi("AudioTrackList");

export const AudioTrackParamsSchema = CaptionParamsSchema;

export const AudioTrackQuerySchema = ProjectQuerySchema.extend({ label: LabelSchema.optional() });

/** `PUT …/audio-tracks/{language}` with a JSON body: the track's file is fetched from a URL. */
export const AudioTrackUrlSchema = z
  .strictObject({
    sourceUrl: z
      .string()
      .max(2048)
      .openapi({
        format: "uri",
        description:
          "Where the service fetches the track's file, as an import from a URL does: a public https:// address " +
          "(http:// and loopback only where webhooks may use them, in local development), each redirect checked again",
        example: "https://media.example.com/intro.fr.m4a",
      }),
  })
  .openapi("AudioTrackSourceUrl");

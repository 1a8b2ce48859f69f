import { z } from "@hono/zod-openapi";
import { POSITIONS, RESOLUTIONS } from "../../media-plan/settings.mjs";
import { TimestampSchema } from "../http/schemas";

// The allowed values live with the encoder, which validates jobs with them (media-plan/settings.mjs);
// the defaults live here: validation, the merge, the OpenAPI document and new projects read both.
export { POSITIONS, RESOLUTIONS };
export const CODECS = ["h264"] as const;

export type Resolution = (typeof RESOLUTIONS)[number];
export type Position = (typeof POSITIONS)[number];

export type EncodingDocument = {
  enabledResolutions: Resolution[];
  mp4FallbackEnabled: boolean;
  outputCodecs: (typeof CODECS)[number][];
  watermark: { enabled: boolean; position: (typeof POSITIONS)[number]; opacity: number; imageKey: string | null };
};

export const DEFAULT_SETTINGS: EncodingDocument = {
  enabledResolutions: ["360p", "720p", "1080p"],
  mp4FallbackEnabled: false,
  outputCodecs: ["h264"],
  watermark: { enabled: false, position: "top-right", opacity: 1, imageKey: null },
};

export const EncodingPatchSchema = z
  .strictObject({
    enabledResolutions: z
      .array(z.enum(RESOLUTIONS))
      .min(1)
      .optional()
      .openapi({ example: ["720p", "1080p"] }),
    mp4FallbackEnabled: z.boolean().optional(),
    // Any string is read here so that an unknown codec can be answered codec_unavailable.
    outputCodecs: z
      .array(z.string())
      .min(1)
      .refine((codecs) => new Set(codecs).size === codecs.length, "codecs must not repeat")
      .optional()
      .openapi({ example: ["h264"], description: "h264 is the only codec; any other is answered codec_unavailable" }),
    watermark: z
      .strictObject({
        enabled: z
          .boolean()
          .optional()
          .openapi({ example: false, description: "true needs a watermark image (PUT …/watermark-image) first" }),
        position: z.enum(POSITIONS).optional(),
        opacity: z.number().min(0).max(1).optional().openapi({ example: 0.8 }),
      })
      .optional(),
  })
  .openapi("EncodingSettingsPatch", {
    description: "Only the fields that change. watermark merges per key; watermark.imageKey is read-only here.",
  });

export type EncodingPatch = z.infer<typeof EncodingPatchSchema>;

export const EncodingSettingsSchema = z
  .object({
    enabledResolutions: z.array(z.enum(RESOLUTIONS)),
    mp4FallbackEnabled: z.boolean(),
    outputCodecs: z.array(z.enum(CODECS)),
    watermark: z.object({
      enabled: z.boolean(),
      position: z.enum(POSITIONS),
      opacity: z.number().min(0).max(1),
      imageKey: z.string().nullable(),
    }),
    updatedAt: TimestampSchema,
  })
  .openapi("EncodingSettings");

/** Resolutions deduplicated and sorted by height, low to high. */
export function normalizeResolutions(resolutions: Resolution[]): Resolution[] {
  return RESOLUTIONS.filter((resolution) => resolutions.includes(resolution));
}

/** The codecs of a patch that are not available, if any. */
export function unavailableCodecs(patch: EncodingPatch): string[] {
  return (patch.outputCodecs ?? []).filter((codec) => !(CODECS as readonly string[]).includes(codec));
}

/** The patch as an RFC 7396 merge patch of the stored document, normalized. */
export function toMergePatch(patch: EncodingPatch): Record<string, unknown> {
  const { enabledResolutions, ...rest } = patch;
  return enabledResolutions ? { ...rest, enabledResolutions: normalizeResolutions(enabledResolutions) } : rest;
}

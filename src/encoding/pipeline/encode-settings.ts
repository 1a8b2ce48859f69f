import { z } from "zod";
import type { PlanSettings } from "../../../media-plan/plan.mjs";
import { logError } from "../../lib/log";
import { watermarkCopyKey } from "../../lib/storage-keys";
import type { VideoRow } from "../../videos/model";
import { DEFAULT_SETTINGS, type EncodingDocument, POSITIONS, RESOLUTIONS } from "../settings";

/**
 * The settings an encoding keeps (`videos.encode_settings`): the project's when it started, so
 * later changes do not alter a video being encoded (docs/encoding.md#encoding-settings).
 */
const EncodeSettingsSchema = z.strictObject({
  enabledResolutions: z.array(z.enum(RESOLUTIONS)).min(1),
  mp4: z.boolean(),
  watermark: z
    .strictObject({ position: z.enum(POSITIONS), opacity: z.number().min(0).max(1), imageKey: z.string() })
    .nullable(),
});
export type EncodeSettings = z.infer<typeof EncodeSettingsSchema>;

/** What an encoding keeps of the project's settings document. */
export function snapshot(document: EncodingDocument): EncodeSettings {
  const { watermark } = document;
  return {
    enabledResolutions: document.enabledResolutions,
    mp4: document.mp4FallbackEnabled,
    watermark:
      watermark.enabled && watermark.imageKey
        ? { position: watermark.position, opacity: watermark.opacity, imageKey: watermark.imageKey }
        : null,
  };
}

/** The settings kept on the video (the defaults where none were kept). */
export function settingsOf(row: Pick<VideoRow, "encode_settings">): EncodeSettings {
  return row.encode_settings ? EncodeSettingsSchema.parse(JSON.parse(row.encode_settings)) : snapshot(DEFAULT_SETTINGS);
}

/** The kept settings as the plan reads them (the image itself is the video's own copy). */
export function planSettings(settings: EncodeSettings): PlanSettings {
  const { watermark } = settings;
  return {
    enabledResolutions: settings.enabledResolutions,
    mp4: settings.mp4,
    watermark: watermark ? { position: watermark.position, opacity: watermark.opacity } : null,
  };
}

/**
 * Keeps the video's own copy of the watermark image its settings named, so that every job draws
 * the same image even after the project's is replaced (and the old one deleted). Best effort: the
 * image's call-back falls back to the key the settings named.
 */
export async function keepWatermark(media: R2Bucket, row: VideoRow, settings: EncodeSettings): Promise<void> {
  if (!settings.watermark) return;
  try {
    const image = await media.get(settings.watermark.imageKey);
    if (image) {
      await media.put(watermarkCopyKey(row.project_id, row.id), image.body, { httpMetadata: image.httpMetadata });
    }
  } catch (error) {
    logError("encoding: keep the watermark image", error, { videoId: row.id });
  }
}

import type { EncodingSettings, Schemas } from "./api";
import { type Position, RESOLUTIONS, type Resolution } from "./enums";

/** What the form edits. */
export type SettingsDraft = {
  enabledResolutions: Resolution[];
  mp4FallbackEnabled: boolean;
  watermarkEnabled: boolean;
  position: Position;
  opacity: number;
};

export function draftOf(settings: EncodingSettings): SettingsDraft {
  return {
    enabledResolutions: [...settings.enabledResolutions],
    mp4FallbackEnabled: settings.mp4FallbackEnabled,
    watermarkEnabled: settings.watermark.enabled,
    position: settings.watermark.position,
    opacity: settings.watermark.opacity,
  };
}

/** The PATCH body of what the draft changed from the settings it was read from (only sent keys change). */
export function patchOf(base: EncodingSettings, draft: SettingsDraft): Schemas["EncodingSettingsPatch"] {
  const patch: Schemas["EncodingSettingsPatch"] = {};
  const sorted = RESOLUTIONS.filter((r) => draft.enabledResolutions.includes(r));
  if (sorted.join() !== RESOLUTIONS.filter((r) => base.enabledResolutions.includes(r)).join()) {
    patch.enabledResolutions = sorted;
  }
  if (draft.mp4FallbackEnabled !== base.mp4FallbackEnabled) patch.mp4FallbackEnabled = draft.mp4FallbackEnabled;
  const watermark: NonNullable<Schemas["EncodingSettingsPatch"]["watermark"]> = {};
  if (draft.watermarkEnabled !== base.watermark.enabled) watermark.enabled = draft.watermarkEnabled;
  if (draft.position !== base.watermark.position) watermark.position = draft.position;
  if (draft.opacity !== base.watermark.opacity) watermark.opacity = draft.opacity;
  if (Object.keys(watermark).length > 0) patch.watermark = watermark;
  return patch;
}

/** The draft's changes in words, so a person whose save met a conflict still sees what they chose. */
export function describePatch(patch: Schemas["EncodingSettingsPatch"]): string {
  const parts: string[] = [];
  if (patch.enabledResolutions) parts.push(`resolutions ${patch.enabledResolutions.join(", ") || "none"}`);
  if (patch.mp4FallbackEnabled !== undefined) parts.push(`MP4 fallback ${patch.mp4FallbackEnabled ? "on" : "off"}`);
  if (patch.watermark?.enabled !== undefined) parts.push(`watermark ${patch.watermark.enabled ? "on" : "off"}`);
  if (patch.watermark?.position) parts.push(`watermark position ${patch.watermark.position}`);
  if (patch.watermark?.opacity !== undefined) parts.push(`watermark opacity ${patch.watermark.opacity}`);
  return parts.join("; ");
}

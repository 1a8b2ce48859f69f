import { logError } from "../../lib/log";
import { ulid } from "../../lib/ulid";
import { publishNow } from "../../subscribers";
import { encodingEvent } from "../../videos/events";
import type { VideoRow } from "../../videos/model";
import { videoAt } from "../../videos/present";
import { readSettings } from "../queries";
import { DEFAULT_SETTINGS } from "../settings";
import { encodingContext } from "./context";
import { isTestVideo, type SourceOf, sourceOf } from "./coordinator-rules";
import { type EncodeSettings, keepWatermark, settingsOf, snapshot } from "./encode-settings";
import { type Change, changeEncoding, claimEncoding, liveVideo } from "./queries";

/** What a video's coordinator does to the video's row in D1: its claim, and each change with its event. */

type Video = { projectId: string; videoId: string };

/**
 * The video becomes `processing` as its first job starts, with the project's encoding settings as
 * they are now (and its own copy of their watermark): those settings, whether it is a test video,
 * where its source is (a clip's is a span of another video's), and the caption languages its
 * creation asked to be generated once it is playable. Null when it cannot (deleted meanwhile). A coordinator that lost its state after claiming
 * finds the video processing already, and its settings on the row.
 */
export async function claimVideo(
  env: Env,
  { projectId, videoId }: Video,
  now: number,
): Promise<{ settings: EncodeSettings; testMode: boolean; source: SourceOf; generatedCaptions: string[] } | null> {
  const db = env.DB;
  const settings = (await readSettings(db, projectId))?.document ?? DEFAULT_SETTINGS;
  let row = await claimEncoding(db, videoId, JSON.stringify(snapshot(settings)), now);
  if (row) await keepWatermark(env.MEDIA, row, settingsOf(row));
  row ??= await liveVideo(db, videoId);
  if (row?.status !== "processing") return null;
  return {
    settings: settingsOf(row),
    testMode: isTestVideo(row),
    source: sourceOf(row),
    generatedCaptions: row.generated_captions ? (JSON.parse(row.generated_captions) as string[]) : [],
  };
}

/**
 * The video's row moves on (playable, ready, errored) with its event in the same write, published
 * at once. Null when the row is no longer processing (deleted meanwhile): nothing changed.
 */
export async function changeVideoRow(env: Env, videoId: string, now: number, change: Change): Promise<VideoRow | null> {
  const { config } = encodingContext(env);
  const db = env.DB;
  const row = await liveVideo(db, videoId);
  if (row?.status !== "processing") return null;
  const eventId = ulid(now);
  const origin = config.publicBaseUrl ?? config.callbackOrigin;
  if (!origin) throw new Error("PUBLIC_BASE_URL or ENCODER_CALLBACK_URL must be set for the URLs in events");
  const changed = await changeEncoding(db, row, change, now, (after) => ({
    id: eventId,
    event: encodingEvent(videoAt(origin, after, now)),
  }));
  if (changed) {
    await publishNow(env, db)([eventId]).catch((error) => logError("encoding: publish", error, { videoId }));
  }
  return changed;
}

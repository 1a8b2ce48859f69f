import type { Db } from "../lib/db";
import { liveVideoCondition } from "../videos/queries";

/**
 * The one D1 read of a playback request: the live video with this id in a live project, whatever
 * its state (the route decides what each state answers); no row for an unknown or deleted video.
 * A statement, so that what a route needs beside the video comes in the same round trip.
 *
 * @allModes a playback URL names its video by id (or a token does) and is its own credential: playback is the same in both modes
 */
export function playbackVideoStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare(`SELECT * FROM videos AS v WHERE v.id = ? AND ${liveVideoCondition("v")}`).bind(videoId);
}

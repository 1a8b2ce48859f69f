import { env } from "cloudflare:workers";
import type { Mode } from "../../src/lib/tenant";
import { api, bearer, json, newKey, newProject, newSession, newVideo, type Session } from "../helpers";
import { newUpload } from "../uploads/support";

/** One mode's objects in a project: each kind of object a key can name by id. */
export type ModeObjects = {
  /** A video with an open upload session, a stored part 1 and chapters. */
  video: string;
  etag: string;
  /** A tus direct upload, and its video. */
  upload: string;
  uploadVideo: string;
  /** A webhook endpoint with a delivery attempt (of a video of the mode, deleted). */
  endpoint: string;
  attempt: string;
};

export type TwoModes = {
  session: Session;
  projectId: string;
  keys: Record<Mode, string>;
  objects: Record<Mode, ModeObjects>;
};

/** A project with a key of each mode, and each mode's objects, made by its key. */
export async function twoModes(): Promise<TwoModes> {
  const session = await newSession();
  const projectId = (await newProject(session)).id;
  const keys = {
    live: await newKey(session, projectId, ["read", "write"], "live"),
    test: await newKey(session, projectId, ["read", "write"], "test"),
  };
  return {
    session,
    projectId,
    keys,
    objects: { live: await objectsOf(keys.live, projectId), test: await objectsOf(keys.test, projectId) },
  };
}

async function objectsOf(key: string, projectId: string): Promise<ModeObjects> {
  const { video } = await newVideo(key, { title: "original" });
  const part = await api(
    `/v1/videos/${video.id}/upload/parts/1`,
    bearer(key, { method: "PUT", body: "part bytes", headers: { "content-length": "10" } }),
  );
  const { etag } = (await part.json()) as { etag: string };
  // Chapters, which the other mode's PUT or DELETE must leave as they are.
  await api(`/v1/videos/${video.id}/chapters`, bearer(key, json("PUT", { chapters: [{ start: 0, title: "Mine" }] })));
  const upload = await newUpload(key);
  const created = await api(
    `/v1/projects/${projectId}/webhook-endpoints`,
    bearer(key, json("POST", { url: "https://hooks.example.com/modes" })),
  );
  const endpoint = ((await created.json()) as { id: string }).id;
  const gone = (await newVideo(key)).video.id;
  await api(`/v1/videos/${gone}`, bearer(key, { method: "DELETE" }));
  const attempt = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE endpoint_id = ?")
    .bind(endpoint)
    .first<string>("id");
  if (!attempt) throw new Error("the deleted video's event made no attempt");
  return { video: video.id, etag, upload: upload.id, uploadVideo: upload.video.id, endpoint, attempt };
}

/** Everything stored about one mode's objects, to compare before and after the other mode acts. */
export async function snapshot(objects: ModeObjects) {
  const reads = [
    ["SELECT * FROM videos WHERE id IN (?, ?)", objects.video, objects.uploadVideo],
    ["SELECT * FROM upload_parts WHERE video_id = ?", objects.video],
    ["SELECT * FROM chapters WHERE video_id = ?", objects.video],
    ["SELECT * FROM tus_uploads WHERE id = ?", objects.upload],
    ["SELECT * FROM webhook_endpoints WHERE id = ?", objects.endpoint],
    ["SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id", objects.endpoint],
  ] as const;
  const results = await env.DB.batch(reads.map(([sql, ...params]) => env.DB.prepare(sql).bind(...params)));
  return results.map((result) => result.results);
}

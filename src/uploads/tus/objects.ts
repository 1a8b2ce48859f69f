import type { TusUploads } from "../../videos/cleanup";

/** The Durable Objects of tus direct uploads (src/uploads/tus/object.ts), one per upload, named by its id. */
export type UploadObjects = Env["TUS_UPLOADS"];

export function uploadObject(objects: UploadObjects, uploadId: string) {
  return objects.get(objects.idFromName(uploadId));
}

/** The tus uploads as a video's clean-up and a project's purge end them. */
export function tusUploads(objects: UploadObjects): TusUploads {
  return { end: (uploadId) => uploadObject(objects, uploadId).end() };
}

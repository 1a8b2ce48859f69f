/**
 * The Durable Object of a tus direct upload (src/uploads/upload-object.ts), named by the upload's
 * id. Here, on the ground floor, so that the capabilities that end an upload from outside (a video's
 * clean-up, a project's purge) reach it without importing the uploads capability.
 */
export type UploadObjects = Env["TUS_UPLOADS"];

export function uploadObject(objects: UploadObjects, uploadId: string) {
  return objects.get(objects.idFromName(uploadId));
}

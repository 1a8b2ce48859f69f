import { mediaType } from "../../http/body";
import { httpDate } from "../../http/conditional";
import { type Store as DeletionStore, deleteVideos } from "../../videos/delete";
import { headerInt, MAX_PATCH_BYTES, OFFSET_CONTENT_TYPE, partSizeFor, tusAnswer } from "./protocol";
import { type Reception, receiveBody } from "./receive";
import { type UploadStore, uploadTenant } from "./store";
import { uploadLocation } from "./url";

// The tus methods on one upload, one handler each, as tusd has them: POST creates, HEAD reports,
// PATCH appends, DELETE terminates. The object (object.ts) runs them one at a time, once it has
// checked that the URL is open and its video live.

/** What a handler works with: the upload's store, and the object's own steps. */
export type TusContext = {
  store: UploadStore;
  /** Where DELETE deletes the upload's video, as DELETE /v1/videos/{id} does. */
  deletions: DeletionStore;
  reception: Reception;
  /** Completes the source now, or leaves it to the object's alarm soon when R2 or D1 fails. */
  completeOrRetry(): Promise<void>;
  /** Aborts the multipart upload, drops every byte held, and stops the alarm. */
  end(): Promise<void>;
  /**
   * Runs the delete of the upload's own video. That delete's clean-up ends this upload from
   * outside (`TusUpload.end`), which would wait behind this very request: meanwhile it returns at
   * once, and the handler ends the upload itself.
   */
  deletingVideo<T>(task: () => Promise<T>): Promise<T>;
};

function answer(tus: TusContext, status: number, headers: Record<string, string> = {}): Response {
  return tusAnswer(status, tus.store.current().corsOrigin, headers);
}

/** POST on the URL: creates the upload, once. */
export async function postUpload(tus: TusContext, request: Request): Promise<Response> {
  const state = tus.store.current();
  const location = uploadLocation(state.url);
  if (state.length !== null) return answer(tus, 409, { Location: location });
  if (request.headers.has("upload-defer-length")) return answer(tus, 400);
  const length = headerInt(request, "upload-length");
  if (length === null) return answer(tus, 400);
  if (length > state.maxSizeBytes) return answer(tus, 413);
  tus.store.save({ ...state, length, partSize: partSizeFor(length) });
  // An empty source is whole at once.
  if (length === 0) await tus.completeOrRetry();
  return answer(tus, 201, { Location: location, "Upload-Expires": httpDate(state.expiresAt) });
}

/** HEAD on the upload: how many bytes it holds. */
export async function headUpload(tus: TusContext): Promise<Response> {
  // A completion left unfinished (R2 or D1 failed) is finished before the client is told it is done.
  if (tus.store.current().phase === "completing") await tus.completeOrRetry();
  const state = tus.store.current();
  return answer(tus, 200, {
    "Upload-Offset": String(state.offset),
    "Upload-Length": String(state.length),
    "Upload-Expires": httpDate(state.expiresAt),
  });
}

/** PATCH on the upload: appends the body at `Upload-Offset`, which must be the offset it holds. */
export async function patchUpload(tus: TusContext, request: Request): Promise<Response> {
  const state = tus.store.current();
  const length = state.length as number;
  if (mediaType(request.headers.get("content-type")) !== OFFSET_CONTENT_TYPE) return answer(tus, 415);
  // A missing or unreadable Upload-Offset is as wrong as another one: the client must HEAD first.
  if (headerInt(request, "upload-offset") !== state.offset) return answer(tus, 409);
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const bytes = Number(declared);
    if (bytes > MAX_PATCH_BYTES || state.offset + bytes > length) return answer(tus, 413);
  }
  let tooLarge = false;
  if (request.body && state.phase === "open") tooLarge = await receiveBody(tus.store, request.body, tus.reception);
  else if (request.body) tooLarge = (await request.body.getReader().read()).value !== undefined;
  if (tus.store.current().phase === "completing") await tus.completeOrRetry();
  return answer(tus, tooLarge ? 413 : 204, {
    "Upload-Offset": String(tus.store.current().offset),
    "Upload-Expires": httpDate(state.expiresAt),
  });
}

/** DELETE on the upload: ends it, and deletes its video as DELETE /v1/videos/{id} does. */
export async function deleteUpload(tus: TusContext): Promise<Response> {
  const state = tus.store.current();
  const [outcome] = await tus.deletingVideo(() => deleteVideos(tus.deletions, uploadTenant(state), [state.videoId]));
  if (outcome && !outcome.ok) {
    if (outcome.code === "upload_completion_in_progress") return answer(tus, 409);
    if (outcome.code === "video_not_found") {
      await tus.end();
      return answer(tus, 404);
    }
    throw new Error(`video delete: ${outcome.code}`);
  }
  await tus.end();
  return answer(tus, 204);
}

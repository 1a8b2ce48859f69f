import { mediaType } from "../../http/body";
import type { Tenant } from "../../lib/tenant";
import { deleteVideos } from "../../videos/delete";
import { headerInt, httpDate, MAX_PATCH_BYTES, OFFSET_CONTENT_TYPE, partSizeFor, tusAnswer } from "./protocol";
import { type Reception, receiveBody } from "./receive";
import type { State, UploadStore } from "./store";
import { uploadLocation } from "./url";

/**
 * The tus methods on one upload, one handler each (tusd's model): POST creates, HEAD reports,
 * PATCH appends, DELETE terminates. The object (object.ts) runs them one at a time, after checking
 * the URL is open and its video live; each works through the upload's store and the object's own
 * steps.
 */
export type Upload = {
  store: UploadStore;
  env: Env;
  reception: Reception;
  /** Completes the source now, or leaves it to the object's alarm soon when R2 or D1 fails. */
  completeOrRetry(): Promise<void>;
  /** Aborts the multipart upload, drops every byte held, and stops the alarm. */
  end(): Promise<void>;
  /** Runs the delete of the upload's own video; the clean-up's call to end this upload waits for nothing meanwhile. */
  deletingVideo<T>(task: () => Promise<T>): Promise<T>;
};

/**
 * Whose video the upload acts on: its own, by id, whatever its mode. The URL is the credential
 * for this one video (contract §13), so no mode narrows what it reaches.
 */
export function uploadTenant(state: State): Tenant {
  return { projectId: state.projectId, mode: "both" };
}

function answer(upload: Upload, status: number, headers: Record<string, string> = {}): Response {
  return tusAnswer(status, upload.store.current().corsOrigin, headers);
}

/** POST on the URL: creates the upload, once. */
export async function create(upload: Upload, request: Request): Promise<Response> {
  const state = upload.store.current();
  const location = uploadLocation(state.url);
  if (state.length !== null) return answer(upload, 409, { Location: location });
  if (request.headers.has("upload-defer-length")) return answer(upload, 400);
  const length = headerInt(request, "upload-length");
  if (length === null) return answer(upload, 400);
  if (length > state.maxSizeBytes) return answer(upload, 413);
  upload.store.save({ ...state, length, partSize: partSizeFor(length) });
  // An empty source is whole at once.
  if (length === 0) await upload.completeOrRetry();
  return answer(upload, 201, { Location: location, "Upload-Expires": httpDate(state.expiresAt) });
}

/** HEAD on the upload: how many bytes it holds. */
export async function head(upload: Upload): Promise<Response> {
  // A completion left unfinished (R2 or D1 failed) is finished before the client is told it is done.
  if (upload.store.current().phase === "completing") await upload.completeOrRetry();
  const state = upload.store.current();
  return answer(upload, 200, {
    "Upload-Offset": String(state.offset),
    "Upload-Length": String(state.length),
    "Upload-Expires": httpDate(state.expiresAt),
  });
}

/** PATCH on the upload: appends the body at `Upload-Offset`, which must be the offset it holds. */
export async function patch(upload: Upload, request: Request): Promise<Response> {
  const state = upload.store.current();
  const length = state.length as number;
  if (mediaType(request.headers.get("content-type")) !== OFFSET_CONTENT_TYPE) return answer(upload, 415);
  // A missing or unreadable Upload-Offset is as wrong as another one: the client must HEAD first.
  if (headerInt(request, "upload-offset") !== state.offset) return answer(upload, 409);
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const bytes = Number(declared);
    if (bytes > MAX_PATCH_BYTES || state.offset + bytes > length) return answer(upload, 413);
  }
  let tooLarge = false;
  if (request.body && state.phase === "open")
    tooLarge = await receiveBody(upload.store, request.body, upload.reception);
  else if (request.body) tooLarge = (await request.body.getReader().read()).value !== undefined;
  if (upload.store.current().phase === "completing") await upload.completeOrRetry();
  return answer(upload, tooLarge ? 413 : 204, {
    "Upload-Offset": String(upload.store.current().offset),
    "Upload-Expires": httpDate(state.expiresAt),
  });
}

/** DELETE on the upload: ends it, and deletes its video as DELETE /v1/videos/{id} does. */
export async function terminate(upload: Upload): Promise<Response> {
  const state = upload.store.current();
  const [outcome] = await upload.deletingVideo(() =>
    deleteVideos({ db: upload.env.DB, deletions: upload.env.DELETION_QUEUE }, uploadTenant(state), [state.videoId]),
  );
  if (outcome && !outcome.ok) {
    if (outcome.code === "upload_completion_in_progress") return answer(upload, 409);
    if (outcome.code === "video_not_found") {
      await upload.end();
      return answer(upload, 404);
    }
    throw new Error(`video delete: ${outcome.code}`);
  }
  await upload.end();
  return answer(upload, 204);
}

import { exports } from "cloudflare:workers";
import { patternedBytes } from "../fixtures/bytes";
import { api, bearer, json } from "../helpers";

export const MiB = 1024 * 1024;
export const TUS = { "tus-resumable": "1.0.0" };

export type DirectUpload = {
  id: string;
  url: string;
  expiresAt: string;
  video: { id: string; projectId: string; status: string; title: string | null; visibility: string };
};

export async function newUpload(key: string, body: Record<string, unknown> = {}): Promise<DirectUpload> {
  const response = await api("/v1/uploads", bearer(key, json("POST", body)));
  if (response.status !== 201) throw new Error(`upload create failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as DirectUpload;
}

/** A request to an upload URL (absolute), as a tus client sends it: no API key. */
export function tus(url: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(url, init));
}

/** Creates the upload of `length` bytes on the URL; returns its Location. */
export async function create(url: string, length: number): Promise<string> {
  const response = await tus(url, { method: "POST", headers: { ...TUS, "upload-length": String(length) } });
  if (response.status !== 201) throw new Error(`tus create failed: ${response.status}`);
  return response.headers.get("location") as string;
}

export function patch(location: string, offset: number, body: BodyInit, headers: Record<string, string> = {}) {
  return tus(location, {
    method: "PATCH",
    headers: {
      ...TUS,
      "content-type": "application/offset+octet-stream",
      "upload-offset": String(offset),
      ...headers,
    },
    body,
  });
}

export async function offsetOf(location: string): Promise<number> {
  const response = await tus(location, { method: "HEAD", headers: TUS });
  if (response.status !== 200) throw new Error(`HEAD answered ${response.status}`);
  return Number(response.headers.get("upload-offset"));
}

export const bytesOf = patternedBytes;

export async function sha256(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A body that sends `bytes` and then fails, as a connection dropped mid-PATCH does. */
export function cutOffBody(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(bytes);
        return;
      }
      controller.error(new Error("connection lost"));
    },
  });
}

import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ProjectEnv } from "../auth/context";
import { ProjectPathParams, projectOwnerSession } from "../auth/guards";
import { jsonBody, receiveJson } from "../http/body";
import { parseEntityTags } from "../http/conditional";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryBody, headerRefs, jsonRequest, jsonResponse } from "../http/schemas";
import { validationHook } from "../http/validation";
import { EXTENSIONS, type ImageUpload, imageBody, readImageUpload } from "../images/upload";
import { replaceObject } from "../lib/replace-object";
import { watermarkKey } from "../lib/storage-keys";
import { ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { patchSettings, readSettings, type StoredSettings, setWatermarkImage } from "./queries";
import { EncodingPatchSchema, EncodingSettingsSchema, toMergePatch, unavailableCodecs } from "./settings";

export const MAX_WATERMARK_BYTES = 1024 * 1024;
const WATERMARK_TYPES = ["image/png", "image/webp"] as const;
/**
 * A watermark is one still picture of at most 4096×4096 (docs/encoding.md#encoding-settings): it is
 * drawn on every frame.
 */
export const MAX_WATERMARK_DIMENSION = 4096;
const WATERMARK_BODY = imageBody(WATERMARK_TYPES, MAX_WATERMARK_BYTES, {
  still: true,
  maxDimension: MAX_WATERMARK_DIMENSION,
});

const settingsResponse = {
  ...jsonResponse(EncodingSettingsSchema, "The full effective settings; ETag names this version"),
  headers: headerRefs(["ETag"]),
};

function etag(version: number): string {
  return `"${version}"`;
}

function respond<E extends ProjectEnv>(c: Context<E>, stored: StoredSettings) {
  c.header("ETag", etag(stored.version));
  c.header("Cache-Control", "no-store");
  return c.json({ ...stored.document, updatedAt: stored.updatedAt }, 200);
}

async function current<E extends ProjectEnv>(c: Context<E>): Promise<StoredSettings> {
  const stored = await readSettings(c.var.db, c.var.projectId);
  if (!stored) throw new ApiError("not_found");
  return stored;
}

/**
 * The versions If-Match allows: null for none given or `*`, else the listed ones (none, for a
 * header that does not parse: an edit the client meant to guard is never made unguarded).
 */
function ifMatchVersions(header: string | undefined): number[] | null {
  if (header === undefined) return null;
  const condition = parseEntityTags(header);
  if (condition === "*") return null;
  return (condition ?? []).filter((tag) => /^\d+$/.test(tag.opaque)).map((tag) => Number(tag.opaque));
}

const read = route({
  method: "get",
  path: "/v1/projects/{projectId}/encoding-settings",
  operationId: "getEncodingSettings",
  tags: ["Encoding settings"],
  summary: "The project's full effective encoding settings",
  middleware: [projectOwnerSession] as const,
  request: { params: ProjectPathParams },
  responses: { 200: settingsResponse },
});

const patch = route(
  {
    method: "patch",
    path: "/v1/projects/{projectId}/encoding-settings",
    operationId: "patchEncodingSettings",
    tags: ["Encoding settings"],
    summary: "Change some encoding settings; send If-Match with an ETag for a safe edit",
    middleware: [projectOwnerSession, receiveJson, rateLimit("encoding_settings"), jsonBody] as const,
    request: {
      params: ProjectPathParams,
      headers: z.object({ "if-match": z.string().optional().openapi({ description: "ETag of the version edited" }) }),
      body: jsonRequest(EncodingPatchSchema),
    },
    responses: {
      200: settingsResponse,
    },
  },
  ["invalid_encoding_settings", "codec_unavailable", "precondition_failed"],
);

const putWatermark = route(
  {
    method: "put",
    path: "/v1/projects/{projectId}/encoding-settings/watermark-image",
    operationId: "putWatermarkImage",
    tags: ["Encoding settings"],
    summary: "Upload the watermark image (raw PNG or WebP, at most 1 MiB); sets watermark.imageKey",
    description:
      "One still picture of at most 4096×4096 pixels: an animated image (APNG, animated WebP) or a larger one is " +
      "`400 invalid_image`.",
    middleware: [projectOwnerSession] as const,
    request: {
      params: ProjectPathParams,
      body: binaryBody(
        WATERMARK_TYPES,
        "A still PNG or WebP image, at most 1 MiB (1,048,576 bytes) and 4096×4096 pixels",
      ),
    },
    responses: {
      200: settingsResponse,
    },
  },
  ["invalid_image", "payload_too_large", "unsupported_media_type"],
);

const deleteWatermark = route({
  method: "delete",
  path: "/v1/projects/{projectId}/encoding-settings/watermark-image",
  operationId: "deleteWatermarkImage",
  tags: ["Encoding settings"],
  summary: "Remove the watermark image; also disables the watermark",
  middleware: [projectOwnerSession] as const,
  request: { params: ProjectPathParams },
  responses: { 200: settingsResponse },
});

/** Points the settings at a new watermark image (or none), deleting the one it replaced. */
async function swapWatermark<E extends ProjectEnv>(c: Context<E>, image: ImageUpload | null): Promise<StoredSettings> {
  const next = image && {
    key: watermarkKey(c.var.projectId, `${ulid()}.${EXTENSIONS[image.type]}`),
    bytes: image.bytes,
    httpMetadata: { contentType: image.type },
  };
  const stored = await replaceObject(c.env.MEDIA, next, (key) =>
    setWatermarkImage(c.var.db, c.var.projectId, key, Date.now()),
  );
  if (!stored) throw new ApiError("not_found");
  return stored;
}

export const encodingRoutes = createRouter()
  .openapi(read, async (c) => respond(c, await current(c)))
  .openapi(
    patch,
    async (c) => {
      const body = c.req.valid("json");
      const unavailable = unavailableCodecs(body);
      if (unavailable.length > 0) {
        throw new ApiError("codec_unavailable", {
          details: unavailable.map((codec) => ({ path: "outputCodecs", message: `${codec} is not available` })),
        });
      }
      const versions = ifMatchVersions(c.req.header("if-match"));
      if (versions?.length === 0) throw new ApiError("precondition_failed");
      const stored = await patchSettings(c.var.db, c.var.projectId, toMergePatch(body), {
        enablesWatermark: body.watermark?.enabled === true,
        expectedVersions: versions,
        now: Date.now(),
      });
      if (stored) return respond(c, stored);
      const now = await current(c);
      if (versions && !versions.includes(now.version)) throw new ApiError("precondition_failed");
      throw new ApiError("invalid_encoding_settings", {
        message: "The watermark cannot be enabled before a watermark image is set.",
        details: [{ path: "watermark.enabled", message: "no watermark image is set" }],
      });
    },
    validationHook({ json: "invalid_encoding_settings", header: "precondition_failed" }),
  )
  .openapi(putWatermark, async (c) => {
    const image = await readImageUpload(c, WATERMARK_BODY);
    return respond(c, await swapWatermark(c, image));
  })
  .openapi(deleteWatermark, async (c) => respond(c, await swapWatermark(c, null)));

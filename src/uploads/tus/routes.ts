import type { Context } from "hono";
import type { AppEnv } from "../../http/context";
import { createRouter } from "../../http/router";
import { uploadObject } from "./objects";
import { tusAnswer } from "./protocol";
import { verifyUploadToken } from "./url";

/**
 * The tus endpoints (docs/api-guide.md#direct-uploads-from-a-browser-tus): the creation URL
 * `/tus/{token}` and its upload `/tus/{token}/source`. Public: the token is the credential. The
 * Worker only checks it and hands the request, body streaming, to the upload's Durable Object,
 * which speaks the protocol. Outside the OpenAPI document: these answer tus, not JSON (POST
 * /v1/uploads describes them).
 */
async function toUpload(c: Context<AppEnv>): Promise<Response> {
  const uploadId = await verifyUploadToken(c.var.config.uploadUrlSecret, c.req.param("token") ?? "");
  if (!uploadId) return tusAnswer(404, "*");
  return uploadObject(c.env.TUS_UPLOADS, uploadId).fetch(c.req.raw);
}

export const tusRoutes = createRouter()
  .all("/tus/:token", toUpload)
  .all("/tus/:token/source", toUpload)
  // Any other path under /tus/ names no upload: a tus 404, not the API's JSON one.
  .all("/tus/*", () => tusAnswer(404, "*"));

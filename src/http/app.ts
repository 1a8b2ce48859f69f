import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { adminRoutes } from "../admin/routes";
import { apiKeyRoutes } from "../api-keys/routes";
import { authRoutes } from "../auth/routes";
import { encodingRoutes } from "../encoding/routes";
import { projectRoutes } from "../projects/routes";
import { publicThumbnails } from "../thumbnails/public";
import { thumbnailRoutes } from "../thumbnails/routes";
import { bulkRoutes } from "../videos/bulk";
import { videoRoutes } from "../videos/routes";
import { uploadRoutes } from "../videos/uploads";
import { webhookRoutes } from "../webhooks/routes";
import type { AppEnv } from "./context";
import { d1Session } from "./d1-session";
import { renderDocs } from "./docs";
import { handleError } from "./errors";
import { notFoundHandler } from "./not-found";
import { loadConfig, requestContext } from "./request-context";
import { validationHook } from "./validation";

const OPENAPI_INFO = {
  openapi: "3.1.0",
  info: { title: "Video hosting API", version: "1.0.0" },
} as const;

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook() });

  app.use("*", requestContext);
  app.use("*", loadConfig);
  app.use("*", d1Session);
  app.use(
    "/v1/*",
    cors({
      origin: (origin, c) => (c.var.config.allowedOrigins.has(origin) ? origin : null),
      credentials: true,
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
      exposeHeaders: ["x-request-id", "x-d1-bookmark", "RateLimit", "RateLimit-Policy", "Retry-After", "ETag"],
      maxAge: 600,
    }),
  );

  // The bulk route comes before /v1/videos/{id}, which would otherwise match "bulk" as an id.
  for (const routes of [
    authRoutes,
    adminRoutes,
    projectRoutes,
    apiKeyRoutes,
    encodingRoutes,
    bulkRoutes,
    videoRoutes,
    uploadRoutes,
    thumbnailRoutes,
    webhookRoutes,
  ]) {
    app.route("/", routes);
  }

  // Public, outside /v1: thumbnail images for browsers and CDNs.
  app.route("/", publicThumbnails);

  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "API key: svc_live_… or svc_test_…",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "svc_session",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "operatorToken", { type: "http", scheme: "bearer" });
  app.doc31("/v1/openapi.json", OPENAPI_INFO);
  app.get("/docs", (c) => c.html(renderDocs(app.getOpenAPI31Document(OPENAPI_INFO))));

  app.notFound(notFoundHandler(app));
  app.onError(handleError);
  return app;
}

import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { ASSETS_PATH, serveAsset } from "./assets";
import type { AppEnv } from "./context";
import { d1Session } from "./d1-session";
import { docsPage } from "./docs";
import { openApiDocument } from "./document";
import { handleError } from "./errors";
import { notFoundHandler } from "./not-found";
import { OPENAPI_DOCUMENT, registerComponents } from "./openapi";
import { loadConfig, requestContext } from "./request-context";
import { validationHook } from "./validation";

/**
 * The base app every request passes through: request id and common headers, configuration, the
 * request's D1 session, CORS. It knows no capability: the composition root (`src/app.ts`)
 * mounts their routers on it, then calls `finishApp`.
 */
export function createBaseApp() {
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
  return app;
}

/** Serves the app's own description (document, reference page, index) and answers the rest. */
export function finishApp(app: OpenAPIHono<AppEnv>) {
  registerComponents(app.openAPIRegistry);
  const document = () => openApiDocument(app);
  app.get("/v1/openapi.json", (c) => c.json(document()));
  app.get("/docs", (c) => c.html(docsPage(OPENAPI_DOCUMENT.info.title)));
  app.get(`${ASSETS_PATH}/*`, serveAsset);
  app.get("/", (c) =>
    c.json({
      name: OPENAPI_DOCUMENT.info.title,
      docs: "/docs",
      openapi: "/v1/openapi.json",
    }),
  );
  app.notFound(notFoundHandler(app));
  app.onError(handleError);
  return app;
}

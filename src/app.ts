import { adminRoutes } from "./admin/routes";
import { beaconRoutes } from "./analytics/beacon-routes";
import { analyticsRoutes } from "./analytics/routes";
import { apiKeyRoutes } from "./api-keys/routes";
import { audioTrackRoutes } from "./audio-tracks/routes";
import { authRoutes } from "./auth/routes";
import { captionRoutes } from "./captions/routes";
import { chapterRoutes } from "./chapters/routes";
import { dashboardRoutes } from "./dashboard/routes";
import { callbackRoutes } from "./encoding/pipeline/callback-routes";
import { encodingRoutes } from "./encoding/routes";
import { createBaseApp, finishApp } from "./http/app";
import { embedRoutes } from "./playback/embed-routes";
import { playbackRoutes } from "./playback/routes";
import { playbackTokenRoutes } from "./playback/token-routes";
import { projectRoutes } from "./projects/routes";
import { publicThumbnails } from "./thumbnails/public-routes";
import { thumbnailRoutes } from "./thumbnails/routes";
import { uploadRoutes } from "./uploads/part-routes";
import { directUploadRoutes } from "./uploads/routes";
import { tusRoutes } from "./uploads/tus/routes";
import { bulkRoutes } from "./videos/bulk-routes";
import { videoRoutes } from "./videos/routes";
import { registerWebhookDocs } from "./webhooks/docs";
import { webhookRoutes } from "./webhooks/routes";

/** The composition root: every capability's router, mounted on the base app. */
export function createApp() {
  const app = createBaseApp();
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
    playbackTokenRoutes,
    directUploadRoutes,
    thumbnailRoutes,
    captionRoutes,
    chapterRoutes,
    audioTrackRoutes,
    webhookRoutes,
    analyticsRoutes,
  ]) {
    app.route("/", routes);
  }
  // Public, outside /v1: thumbnail images for browsers and CDNs.
  app.route("/", publicThumbnails);
  // Public, outside /v1: playback and the embed page, for players and browsers anywhere.
  // Beacons first: the playback router's catch-all GET and its OPTIONS would answer their path.
  app.route("/", beaconRoutes);
  app.route("/", playbackRoutes);
  app.route("/", embedRoutes);
  // Internal: the encoder's calls back about its attempt, each with the attempt's own token.
  app.route("/", callbackRoutes);
  // Public, outside /v1: tus upload URLs, whose token is their credential.
  app.route("/", tusRoutes);
  // The dashboard's page (its script and style are static assets), and a browser's `GET /`.
  app.route("/", dashboardRoutes);
  registerWebhookDocs(app.openAPIRegistry);
  return finishApp(app);
}

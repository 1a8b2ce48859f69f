import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildAssets } from "./scripts/build-assets.ts";

// wrangler.toml's [assets] directory must hold the vendored files before any Worker starts.
buildAssets();

const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));

export default defineConfig({
  test: {
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", ["json", { outputFile: ".vitest/report.json" }]],
    projects: [
      {
        plugins: [
          cloudflareTest({
            main: "./src/index.ts",
            // Nothing here reaches Cloudflare: the AI binding (Workers AI) needs an account, so it is
            // there but cannot run; tests give the Worker a stand-in where they need Whisper's answers.
            remoteBindings: false,
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Tests run the queue handler themselves (createMessageBatch), so they decide when a
              // message is consumed; the live consumers wait as long as Miniflare allows.
              queueConsumers: {
                "webhook-deliveries": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "webhook-deliveries-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-deletions": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-deletions-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "project-deletions": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-encodings": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-encodings-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-beacons": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-beacons-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-imports": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "video-imports-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "caption-generations": { maxBatchSize: 100, maxBatchTimeout: 60 },
                "caption-generations-dlq": { maxBatchSize: 100, maxBatchTimeout: 60 },
              },
              bindings: {
                TEST_MIGRATIONS: migrations,
                ENVIRONMENT: "development",
                CURSOR_SECRET: "test-cursor-secret-0123456789abcdef0123",
                PLAYBACK_SECRET: "test-playback-secret-0123456789abcdef01",
                UPLOAD_URL_SECRET: "test-upload-url-secret-0123456789abcdef",
                IDEMPOTENCY_SECRET: "test-idempotency-secret-0123456789abcde",
                ENCODER_CALLBACK_SECRET: "test-encoder-callback-secret-0123456789",
                // Jobs go to a fake encoder the tests install (test/encoding/pipeline/support.ts).
                ENCODER_URL: "http://encoder.test",
                ENCODER_CALLBACK_URL: "http://api.test",
                ENCODER_TOKEN: "test-encoder-token-0123456789abcdef012",
                ENCODER_SLOTS: "2",
                ENCODER_INTERACTIVE_SLOTS: "2",
                ENCODER_VIDEO_SLOTS: "2",
                // The encoder's engine hears speech (the fake encoder says it has pocketsphinx).
                SPEECH_ENGINE: "encoder",
                // The fuzzer's size and seed: npm test runs a fixed seed, npm run fuzz more at random.
                FUZZ_RUNS: process.env.FUZZ_RUNS ?? "2000",
                FUZZ_SEED: process.env.FUZZ_SEED ?? "20261122",
                ADMIN_TOKEN: "test-admin-token",
                ALLOWED_ORIGINS: "https://dashboard.example",
                ALLOW_HTTP_WEBHOOKS: "false",
                PUBLIC_BASE_URL: "",
              },
            },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**"],
          setupFiles: ["./test/setup.ts"],
          // Some tests set up a hundred videos first; a loaded 2-core CI machine needs headroom.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          // One dev server at a time: the encoding tests hold the promised timings (playable in
          // 10 s, a segment in 10 s: docs/encoding.md#long-videos-playable-in-seconds) on this
          // 2-core machine, which two files at once would share.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          // The dashboard's client-side logic (dashboard/, docs/dashboard.md): routes, forms'
          // errors, uploads' titles and resume keys, paging, bulk results, settings patches, charts.
          name: "dashboard",
          include: ["dashboard/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          // The encoder program (encoder/): units, and integration runs of the real server and
          // ffmpeg against a fake Worker.
          name: "encoder",
          include: ["encoder/**/*.test.mjs"],
          environment: "node",
          // One file at a time: the integration files each run an encoder and ffmpeg, and their
          // timed checks (a job's children, its silence, SIGTERM) want the machine's cores.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          // What the Worker and the encoder share (media-plan/: the protocol, the plan, the ladder,
          // the pictures, the settings): pure units, run in Node as the encoder runs them.
          name: "media-plan",
          include: ["media-plan/**/*.test.mjs"],
          environment: "node",
        },
      },
    ],
  },
});

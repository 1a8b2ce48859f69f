import { Container } from "@cloudflare/containers";

/**
 * The encoder program (encoder/, its Dockerfile) as a Cloudflare Container: one instance per
 * encoder slot of the pool (`containerEncoder`), running one job at a time. It answers a job at
 * once and reports back over HTTP to the Worker's internal encoding routes; each heartbeat renews
 * the activity timeout, so an instance sleeps only once its encoder has been silent this long.
 * Never constructed locally: `npm run dev` runs the same program as a plain process (ENCODER_URL)
 * and wrangler dev runs without containers.
 */
export class EncoderContainer extends Container {
  override defaultPort = 8788;
  override sleepAfter = "2m";
  override envVars: Record<string, string> = {
    ENCODER_PORT: "8788",
    ENCODER_HOST: "0.0.0.0",
    // The job API refuses every call without the token the Worker sends.
    ENCODER_TOKEN: this.env.ENCODER_TOKEN ?? "",
    // One job at a time: an instance is one slot of the pool.
    ENCODER_INTERACTIVE_JOBS: "1",
    ENCODER_BACKGROUND_JOBS: "1",
  };
}

import type { Config } from "../config";
import type { Db } from "../lib/db";
import { publishNow } from "../subscribers";
import type { PipelineDeps } from "./attempts";
import { encoderOf } from "./encoder";
import { sendEncode } from "./queue";

/** The pipeline's dependencies from the Worker's bindings and configuration. */
export function pipelineDeps(env: Env, config: Config, db: Db = env.DB): PipelineDeps {
  return {
    db,
    media: env.MEDIA,
    encoder: encoderOf(env, config),
    requeue: async (message) => {
      await sendEncode(env.ENCODE_QUEUE, message);
    },
    publish: publishNow(env, db),
    config,
  };
}

import { readConfig } from "../config";
import { realTimer, type Timer } from "../lib/time";
import { publishNow } from "../subscribers";
import { IMPORT_LIMITS, type ImportLimits } from "./limits";
import type { ResumeStore } from "./resume";
import type { ImportDeps } from "./run";
import type { TargetDeps } from "./targets";

/** What ending an import needs (failing it, or handing its file on), from the Worker's bindings. */
export function failDeps(env: Env): TargetDeps {
  const config = readConfig(env);
  return {
    db: env.DB,
    media: env.MEDIA,
    publish: publishNow(env),
    origin: config.publicBaseUrl ?? config.callbackOrigin,
    clock: Date.now,
    encodeQueue: env.ENCODE_QUEUE,
  };
}

/** What a run may be given instead of the real thing: a test's fake origin, limits and clock. */
export type RunOptions = {
  resume: ResumeStore;
  signal?: AbortSignal | undefined;
  fetch?: typeof fetch | undefined;
  limits?: ImportLimits | undefined;
  clock?: (() => number) | undefined;
  timer?: Timer | undefined;
};

/** A run's dependencies from the Worker's bindings: the real fetch, limits and clock, unless given others. */
export function importDeps(env: Env, options: RunOptions): ImportDeps {
  const config = readConfig(env);
  const limits = options.limits ?? IMPORT_LIMITS;
  const windowMs = config.importPaceWindowMs;
  return {
    ...failDeps(env),
    clock: options.clock ?? Date.now,
    timer: options.timer ?? realTimer,
    // Called as a plain function, looked up at the call: the runtime's fetch refuses a `this` other
    // than the global scope, and a test may stand in for it.
    fetch: (input, init) => (options.fetch ?? fetch)(input, init),
    rules: { allowHttp: config.allowHttpWebhooks },
    limits: windowMs === null ? limits : { ...limits, pace: { ...limits.pace, windowMs } },
    resume: options.resume,
    signal: options.signal,
  };
}

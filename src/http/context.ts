import type { Config } from "../config";

/**
 * What every request has, authenticated or not. What authentication adds (the caller, the
 * project) is typed where it is set: `auth/context.ts`.
 */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: Config;
    /** The request's D1 session: every query of a request goes through it (see d1Session). */
    db: D1DatabaseSession;
    /** The body's bytes, being read since `receiveBody` started it. */
    receivedBody?: Promise<Uint8Array>;
    /**
     * Set by a handler whose 2xx answer must not be replayed for its Idempotency-Key (a bulk answer
     * with entries a retry should run again): the key is left unused.
     */
    idempotencyKeyUnused?: boolean;
  };
};

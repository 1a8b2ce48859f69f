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

/**
 * Who is calling, as much of it as the middleware beneath authentication needs (rate limits count
 * per key or session and per account; idempotency keys are kept per caller). `authenticate`
 * (src/auth/) sets the full caller, which has this shape; declaring the shape here keeps those
 * capabilities from importing authentication, which uses them.
 */
export type CallerIdentity = { accountId: string } & (
  | { kind: "key"; keyId: string }
  | { kind: "session"; sessionId: string }
);

/** A request that may be behind `authenticate`: its caller and project, when it is. */
export type MaybeCallerEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { caller?: CallerIdentity; projectId?: string };
};

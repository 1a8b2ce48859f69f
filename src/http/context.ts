import type { Account, Plan } from "../auth/accounts";
import type { Config } from "../config";

export type Scope = "read" | "write";

/** Who is calling: a dashboard session or an API key. */
export type Caller =
  | { kind: "session"; accountId: string; sessionId: string; approved: boolean; plan: Plan; account: Account }
  | {
      kind: "key";
      accountId: string;
      keyId: string;
      projectId: string;
      scopes: Scope[];
      approved: boolean;
    };

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: Config;
    /** The request's D1 session: every query of a request goes through it (see d1Session). */
    db: D1DatabaseSession;
    caller: Caller;
    /** The project a video operation acts on: the key's, or `?projectId=` under cookie auth. */
    projectId: string;
    /** The body's bytes, being read since `receiveBody` started it. */
    receivedBody?: Promise<Uint8Array>;
  };
};

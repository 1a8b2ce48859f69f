import type { AppEnv } from "../http/context";
import type { Mode, Tenant } from "../lib/tenant";
import type { Account, Plan } from "./account";

export const SCOPES = ["read", "write"] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: a dashboard session or an API key. */
export type Caller =
  | { kind: "session"; accountId: string; sessionId: string; approved: boolean; plan: Plan; account: Account }
  | {
      kind: "key";
      accountId: string;
      keyId: string;
      projectId: string;
      mode: Mode;
      scopes: Scope[];
      approved: boolean;
    };

/** What `authenticate` sets: the caller. Only a route behind it can read one. */
export type AuthedEnv = { Bindings: Env; Variables: AppEnv["Variables"] & { caller: Caller } };

/**
 * What `authenticate` with a project source sets besides: the project the operation acts on (the
 * key's, `?projectId=` under cookie auth, or the path's).
 */
export type ProjectEnv = { Bindings: Env; Variables: AuthedEnv["Variables"] & { projectId: string } };

/**
 * What `authenticate` with a project source and `modes` sets besides the project: the tenant, the
 * project with the mode of objects the operation sees and creates (the key's; under a session
 * cookie, `?mode=`'s, else both). Video, upload, thumbnail, playback-token and webhook routes act
 * through it; their queries take it whole, so the mode travels with the project id. (`projectId`
 * stays set, for what is per project whatever the mode: rate-limit buckets, storage keys.)
 */
export type TenantEnv = { Bindings: Env; Variables: ProjectEnv["Variables"] & { tenant: Tenant } };

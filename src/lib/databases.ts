/**
 * The database that holds a project's data. One database holds every project today; this is the
 * one place that would choose another (say, a binding per shard, picked from a project → shard
 * table in the accounts database) when one database is outgrown (README, "Scaling"). Accounts,
 * sessions, API keys and projects themselves stay in `env.DB`: authentication reads them before it
 * knows a project.
 */
export function projectDatabase(env: Env, _projectId: string): D1Database {
  return env.DB;
}

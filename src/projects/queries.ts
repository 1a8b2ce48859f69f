import type { Plan } from "../auth/accounts";
import { insertDefaults } from "../encoding/queries";
import type { Db } from "../lib/db";

type ProjectRow = { id: string; account_id: string; name: string; plan: Plan; created_at: string };

export type Project = { id: string; name: string; plan: Plan; createdAt: string };

function toProject(row: ProjectRow): Project {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: row.created_at };
}

export async function insertProject(
  db: Db,
  input: { id: string; accountId: string; name: string; plan: Plan; createdAt: string },
): Promise<Project> {
  // A project never exists without its encoding settings.
  await db.batch([
    db
      .prepare("INSERT INTO projects (id, account_id, name, plan, created_at) VALUES (?, ?, ?, ?, ?)")
      .bind(input.id, input.accountId, input.name, input.plan, input.createdAt),
    insertDefaults(db, input.id, Date.parse(input.createdAt)),
  ]);
  return { id: input.id, name: input.name, plan: input.plan, createdAt: input.createdAt };
}

export async function listProjects(db: Db, accountId: string): Promise<Project[]> {
  const { results } = await db
    .prepare("SELECT * FROM projects WHERE account_id = ? ORDER BY created_at DESC, id DESC")
    .bind(accountId)
    .all<ProjectRow>();
  return results.map(toProject);
}

/** The account's project with this id, or null (unknown and foreign projects look the same). */
export async function findOwnedProject(db: Db, accountId: string, projectId: string): Promise<Project | null> {
  const row = await db
    .prepare("SELECT * FROM projects WHERE id = ? AND account_id = ?")
    .bind(projectId, accountId)
    .first<ProjectRow>();
  return row ? toProject(row) : null;
}

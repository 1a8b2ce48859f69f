import { z } from "zod";
import { logError } from "../lib/log";
import { consumeEach } from "../lib/queue";
import { MINUTE } from "../lib/time";
import { ULID_PATTERN } from "../lib/ulid";
import { PURGE_LIMITS, type PurgeDeps, type PurgeLimits, purgeProject } from "./purge";
import { deletedProjects } from "./queries";

/**
 * The `project-deletions` queue: one message per deleted project, whose consumer purges it in
 * bounded runs. A run that leaves work sends the message again, so a large project is purged run
 * after run without waiting; the scheduled sweep is the backstop for a lost or failed message.
 */
export const PROJECT_DELETION_QUEUE = "project-deletions";

const ProjectDeletionMessageSchema = z.strictObject({ projectId: z.string().regex(ULID_PATTERN) });
export type ProjectDeletionMessage = z.infer<typeof ProjectDeletionMessageSchema>;

export function sendProjectDeletion(queue: Queue, message: ProjectDeletionMessage): Promise<unknown> {
  return queue.send(ProjectDeletionMessageSchema.parse(message));
}

export type ProjectDeletionDeps = PurgeDeps & { queue: Queue };

/**
 * One bounded run of the project's purge. When work is left and the run made progress, the
 * message is sent again for the next run; a run that removed nothing leaves the rest to the sweep
 * (so a project that cannot be finished never loops through the queue). Failures throw, for the
 * queue's retries.
 */
export async function continuePurge(
  deps: ProjectDeletionDeps,
  message: ProjectDeletionMessage,
  limits: PurgeLimits = PURGE_LIMITS,
): Promise<void> {
  const result = await purgeProject(deps, message.projectId, limits);
  if (result.done) return;
  if (result.removed === 0) {
    logError("project purge: no progress, the sweep takes over", "a run removed nothing", {
      projectId: message.projectId,
    });
    return;
  }
  await sendProjectDeletion(deps.queue, message);
}

/** The queue's handler: one bounded purge run per message, retried by the queue on failure. */
export function consumeProjectDeletions(batch: MessageBatch<unknown>, deps: ProjectDeletionDeps): Promise<void> {
  return consumeEach(
    batch,
    ProjectDeletionMessageSchema,
    { malformed: "project deletion message malformed", failed: "project purge" },
    (message) => continuePurge(deps, message),
  );
}

/** Deleted projects one sweep takes on, each for one bounded run. */
const SWEEP_PROJECTS = 5;

/**
 * The scheduled backstop: one bounded purge run for each of the oldest deleted projects whose
 * purge is not finished, once their queue message has had a minute. One that fails is logged and
 * tried again by the next sweep.
 */
export async function sweepDeletedProjects(
  deps: PurgeDeps,
  now: number = Date.now(),
  limits: PurgeLimits = PURGE_LIMITS,
): Promise<number> {
  let finished = 0;
  for (const projectId of await deletedProjects(deps.db, now - MINUTE, SWEEP_PROJECTS)) {
    try {
      if ((await purgeProject(deps, projectId, limits)).done) finished += 1;
    } catch (error) {
      logError("scheduled: project purge", error, { projectId });
    }
  }
  return finished;
}

import type { Position } from "../lib/cursor";
import type { Db } from "../lib/db";
import { endpointStatement } from "./endpoint-queries";
import type { DeliveryRow, DeliveryState, EndpointRow } from "./model";

export type DeliveryFilter = { state?: DeliveryState | undefined; eventType?: string | undefined };

/**
 * The page query for a filter: built from the filters given rather than `(? IS NULL OR …)` guards,
 * so each shape is one seek on the index that leads with its filters in the listing order.
 */
export function deliveriesQuery(
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): { sql: string; params: unknown[] } {
  const where = ["endpoint_id = ?"];
  const params: unknown[] = [endpointId];
  if (filter.state !== undefined) {
    where.push("state = ?");
    params.push(filter.state);
  }
  if (filter.eventType !== undefined) {
    where.push("event_type = ?");
    params.push(filter.eventType);
  }
  if (after) {
    where.push("(created_at, id) < (?, ?)");
    params.push(after.createdAt, after.id);
  }
  params.push(limit + 1);
  return {
    sql: `SELECT * FROM webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
    params,
  };
}

/**
 * The project's endpoint and `limit + 1` of its attempts after `after`, newest first, in one round
 * trip. A null endpoint means it is not the project's: the attempts read with it are dropped here
 * and never leave this function.
 */
export async function endpointDeliveries(
  db: Db,
  projectId: string,
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): Promise<{ endpoint: EndpointRow | null; rows: DeliveryRow[] }> {
  const { sql, params } = deliveriesQuery(endpointId, filter, limit, after);
  const [endpoint, page] = await db.batch([
    endpointStatement(db, projectId, endpointId),
    db.prepare(sql).bind(...params),
  ]);
  const row = (endpoint?.results[0] as EndpointRow | undefined) ?? null;
  return { endpoint: row, rows: row ? ((page?.results ?? []) as DeliveryRow[]) : [] };
}

export function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | null> {
  return db
    .prepare("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?")
    .bind(id, endpointId)
    .first<DeliveryRow>();
}

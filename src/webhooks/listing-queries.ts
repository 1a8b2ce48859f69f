import type { Position } from "../lib/cursor";
import { type Condition, type Db, newestFirstPage } from "../lib/db";
import type { Tenant } from "../lib/tenant";
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
  const conditions: Condition[] = [{ sql: "endpoint_id = ?", params: [endpointId] }];
  if (filter.state !== undefined) conditions.push({ sql: "state = ?", params: [filter.state] });
  if (filter.eventType !== undefined) conditions.push({ sql: "event_type = ?", params: [filter.eventType] });
  return newestFirstPage("webhook_deliveries", conditions, after, limit);
}

/**
 * The tenant's endpoint and `limit + 1` of its attempts after `after`, newest first, in one round
 * trip. A null endpoint means it is not the tenant's (another project's, or another mode's): the
 * attempts read with it are dropped here and never leave this function.
 */
export async function endpointDeliveries(
  db: Db,
  tenant: Tenant,
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): Promise<{ endpoint: EndpointRow | null; rows: DeliveryRow[] }> {
  const { sql, params } = deliveriesQuery(endpointId, filter, limit, after);
  const [endpoint, page] = await db.batch([endpointStatement(db, tenant, endpointId), db.prepare(sql).bind(...params)]);
  const row = (endpoint?.results[0] as EndpointRow | undefined) ?? null;
  return { endpoint: row, rows: row ? ((page?.results ?? []) as DeliveryRow[]) : [] };
}

export function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | null> {
  return db
    .prepare("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?")
    .bind(id, endpointId)
    .first<DeliveryRow>();
}

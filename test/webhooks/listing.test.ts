import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/lib/time";
import { ulid } from "../../src/lib/ulid";
import { deliveriesQuery } from "../../src/webhooks/listing-queries";
import { api, bearer, errorCode, json } from "../helpers";
import { type Attempt, deleteAVideo, setUp } from "./support";

type Page = { data: Attempt[]; nextCursor: string | null };

/** An endpoint with `count` attempts of one event, alternating failed and succeeded. */
async function withAttempts(count: number) {
  const setup = await setUp();
  await deleteAVideo(setup.key);
  const event = await env.DB.prepare("SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ?")
    .bind(setup.endpoint.id)
    .first<string>("event_id");
  await env.DB.prepare("DELETE FROM webhook_deliveries WHERE endpoint_id = ?").bind(setup.endpoint.id).run();
  const start = Date.now() - count * 1000;
  const statements = Array.from({ length: count }, (_, i) =>
    env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, created_at, due_at)
       VALUES (?1, ?2, ?3, 'video.deleted', ?4, ?5, ?6, ?6)`,
    ).bind(
      ulid(start + i * 1000),
      setup.endpoint.id,
      event,
      i % 2 ? "failed" : "succeeded",
      i + 1,
      isoTime(start + i * 1000),
    ),
  );
  await env.DB.batch(statements);
  return { ...setup, path: `${setup.base}/${setup.endpoint.id}/deliveries` };
}

async function page(key: string, url: string): Promise<Page> {
  const response = await api(url, bearer(key));
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

describe("signed cursors", () => {
  it("walk every attempt once, newest first", async () => {
    const { key, path } = await withAttempts(7);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const next: Page = await page(key, `${path}?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...next.data.map((a) => a.attempt));
      cursor = next.nextCursor;
    } while (cursor);
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });

  it("refuse an altered cursor, and one issued for another filter or endpoint", async () => {
    const { key, path, base } = await withAttempts(5);
    const { nextCursor } = await page(key, `${path}?limit=2`);
    const cursor = nextCursor as string;
    const [payload = "", mac = ""] = cursor.split(".");
    const flipped = (text: string) => text.slice(0, -2) + (text.at(-2) === "A" ? "B" : "A") + text.slice(-1);
    const otherEndpoint = await api(base, bearer(key, json("POST", { url: "https://hooks.example.com/2" })));
    const other = ((await otherEndpoint.json()) as { id: string }).id;
    const forgedPosition = btoa(JSON.stringify(["2030-01-01T00:00:00.000Z", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]))
      .replaceAll("=", "")
      .replaceAll("+", "-")
      .replaceAll("/", "_");
    for (const url of [
      `${path}?cursor=${flipped(payload)}.${mac}`,
      `${path}?cursor=${payload}.${flipped(mac)}`,
      // Another spelling of the MAC's last character (its 4 unused bits): the same bytes, not this cursor.
      `${path}?cursor=${payload}.${mac.slice(0, -1)}${respell(mac.at(-1) as string)}`,
      `${path}?cursor=${forgedPosition}.${mac}`,
      `${path}?cursor=${payload}`,
      `${path}?state=failed&cursor=${cursor}`,
      `${path}?eventType=video.deleted&cursor=${cursor}`,
      `${base}/${other}/deliveries?cursor=${cursor}`,
    ]) {
      const response = await api(url, bearer(key));
      expect(response.status, url).toBe(400);
      expect(await errorCode(response)).toBe("invalid_cursor");
    }
    // The cursor itself still works where it was issued.
    expect((await page(key, `${path}?limit=2&cursor=${cursor}`)).data.map((a) => a.attempt)).toEqual([3, 2]);
  });

  it("carry their filter: a filtered walk stays filtered", async () => {
    const { key, path } = await withAttempts(6);
    const first = await page(key, `${path}?state=failed&limit=2`);
    const second = await page(key, `${path}?state=failed&limit=2&cursor=${first.nextCursor}`);
    expect([...first.data, ...second.data].map((a) => [a.attempt, a.state])).toEqual([
      [6, "failed"],
      [4, "failed"],
      [2, "failed"],
    ]);
    expect(second.nextCursor).toBeNull();
  });
});

describe("every page is one index seek", () => {
  const position = { createdAt: "2026-11-22T06:00:00.000Z", id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" };
  const shapes = [
    ["no filter", {}],
    ["state", { state: "failed" as const }],
    ["eventType", { eventType: "video.deleted" }],
    ["state and eventType", { state: "pending" as const, eventType: "video.deleted" }],
  ] as const;
  for (const [name, filter] of shapes) {
    for (const after of [null, position]) {
      it(`${name}, ${after ? "deep" : "first page"}: SEARCH on an index, no temp B-tree`, async () => {
        const { sql, params } = deliveriesQuery("01ARZ3NDEKTSV4RRFFQ69G5FAV", filter, 100, after);
        const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .bind(...params)
          .all<{ detail: string }>();
        const plan = results.map((row) => row.detail);
        expect(plan).toHaveLength(1);
        expect(plan[0]).toMatch(/^SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_list/);
        if (after) expect(plan[0]).toContain("(created_at,id)<(?,?)");
        expect(plan.join("\n")).not.toMatch(/TEMP B-TREE/);
      });
    }
  }
});

describe("manual retry", () => {
  it("is limited per caller as delivery_retry, 30 per 60 s", async () => {
    const { key, path } = await withAttempts(1);
    const [attempt] = (await page(key, path)).data;
    const url = `${path}/${attempt?.id}/retry`;
    const responses = await Promise.all(Array.from({ length: 32 }, () => api(url, bearer(key, { method: "POST" }))));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(responses[0]?.headers.get("ratelimit-policy")).toBe('"delivery_retry";q=30;w=60');
    const limited = responses.find((r) => r.status === 429) as Response;
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await errorCode(limited)).toBe("rate_limited");
  });
});

/** Another base64url character whose top 2 bits (the only ones a 22-character, 16-byte value uses) are the same. */
function respell(char: string): string {
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const value = ALPHABET.indexOf(char);
  return ALPHABET[value ^ 0b0001] as string;
}

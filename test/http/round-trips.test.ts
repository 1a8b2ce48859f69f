import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { type BudgetedRoute, ROUND_TRIP_BUDGET } from "../round-trip-budget";
import { apiWith } from "../support/app";
import { CALLS, workspace } from "../support/calls";
import { countingBindings } from "../support/round-trips";

describe("round-trip budget", () => {
  it("covers every operation of the API", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const budgeted = new Set(
      Object.keys(ROUND_TRIP_BUDGET).map((name) => name.replace(/ (delete|set_visibility|on demand|range)$/, "")),
    );
    expect(operations.filter((operation) => !budgeted.has(operation))).toEqual([]);
  });

  for (const route of Object.keys(ROUND_TRIP_BUDGET) as BudgetedRoute[]) {
    it(`${route}: ${JSON.stringify(ROUND_TRIP_BUDGET[route])}`, async () => {
      const ws = await workspace();
      const call = await CALLS[route](ws);
      const counting = countingBindings();
      const response = await apiWith(counting.bindings, call.path, call.init);
      expect(response.status, await response.clone().text()).toBe(call.status);
      expect(counting.counts()).toEqual(ROUND_TRIP_BUDGET[route]);
    });
  }
});

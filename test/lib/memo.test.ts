import { describe, expect, it } from "vitest";
import { Forgetting, Memo } from "../../src/lib/memo";

describe("Memo", () => {
  it("keeps a value for less than its time, at most its capacity, the oldest stored going first", () => {
    const memo = new Memo<number>(5_000, 2);
    memo.set("a", 1, 1_000, memo.ticket());
    expect(memo.get("a", 5_999)).toBe(1);
    expect(memo.get("a", 6_000)).toBeUndefined();
    memo.set("a", 1, 1_000, memo.ticket());
    memo.set("b", 2, 1_000, memo.ticket());
    memo.set("c", 3, 1_000, memo.ticket());
    expect([memo.get("a", 1_000), memo.get("b", 1_000), memo.get("c", 1_000)]).toEqual([undefined, 2, 3]);
    // A clock that went back never serves a value from its future.
    expect(memo.get("b", 999)).toBeUndefined();
  });

  it("forgets through its Forgetting, named keys or all, and a read that crossed a forget stores nothing", () => {
    const forgetting = new Forgetting();
    const rows = new Memo<string>(5_000, 10, forgetting);
    const others = new Memo<string>(5_000, 10, forgetting);
    for (const memo of [rows, others]) {
      memo.set("a", "A", 0, memo.ticket());
      memo.set("b", "B", 0, memo.ticket());
    }
    forgetting.forget(["a"]);
    expect([rows.get("a", 1), rows.get("b", 1), others.get("a", 1), others.get("b", 1)]).toEqual([
      undefined,
      "B",
      undefined,
      "B",
    ]);
    const ticket = rows.ticket();
    forgetting.forget(["z"]);
    rows.set("a", "stale", 1, ticket);
    expect(rows.get("a", 1)).toBeUndefined();
    rows.forget();
    expect([rows.get("b", 1), others.get("b", 1)]).toEqual([undefined, undefined]);
    expect(forgetting.count).toBe(3);
  });
});

import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../src/webhooks/delivery-queue";
import { IN_FLIGHT, LaneSchedule } from "../../src/webhooks/lane";

const message = (n: number): DeliveryMessage => ({
  deliveryId: `01JD00000000000000000000${String(n).padStart(2, "0")}`,
  endpointId: "01JD0000000000000000000000",
  projectId: "01JD0000000000000000000001",
});

/** A lane whose sends finish only when the test says so. */
function controlledLane() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const lane = new LaneSchedule(
    (m) =>
      new Promise<void>((resolve) => {
        started.push(m.deliveryId);
        finish.set(m.deliveryId, resolve);
      }),
    () => {},
  );
  return { lane, started, finish: (n: number) => finish.get(message(n).deliveryId)?.() };
}

describe("a delivery lane", () => {
  it("starts each attempt at once without waiting for those still running", () => {
    const { lane, started } = controlledLane();
    lane.accept(message(1));
    lane.accept(message(2));
    // The first never finishes (a hanging endpoint); the second has started all the same.
    expect(started).toEqual([message(1).deliveryId, message(2).deliveryId]);
  });

  it(`runs at most ${IN_FLIGHT} at a time, then the rest in order as slots free`, async () => {
    const { lane, started, finish } = controlledLane();
    for (let n = 1; n <= IN_FLIGHT + 2; n++) lane.accept(message(n));
    expect(started).toHaveLength(IN_FLIGHT);
    expect(lane.running).toBe(IN_FLIGHT);
    finish(3);
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toHaveLength(IN_FLIGHT + 1);
    expect(started.at(-1)).toBe(message(IN_FLIGHT + 1).deliveryId);
  });

  it("does not take an attempt twice while it is in hand, and is idle when all are done", async () => {
    const { lane, started, finish } = controlledLane();
    lane.accept(message(1));
    lane.accept(message(1));
    expect(started).toHaveLength(1);
    let idle = false;
    const waiting = lane.idle().then(() => {
      idle = true;
    });
    await Promise.resolve();
    expect(idle).toBe(false);
    finish(1);
    await waiting;
    expect(idle).toBe(true);
  });

  it("survives a send that throws", async () => {
    let calls = 0;
    const lane = new LaneSchedule(
      async () => {
        calls++;
        throw new Error("boom");
      },
      () => {},
    );
    lane.accept(message(1));
    await lane.idle();
    lane.accept(message(2));
    await lane.idle();
    expect(calls).toBe(2);
  });
});

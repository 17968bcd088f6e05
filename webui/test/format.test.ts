import { age, formatBytes, formatDuration, formatNumber, instanceHours, stateTone } from "../src/format";
import { countSlots } from "../src/pages/Cluster";
import type { Agent } from "../src/types";

describe("format", () => {
  it("writes durations at the scale that matters", () => {
    expect(formatDuration(3_400)).toBe("3s");
    expect(formatDuration(245_000)).toBe("4m 05s");
    expect(formatDuration(7_380_000)).toBe("2h 03m");
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d 4h");
    expect(formatDuration(-1)).toBe("—");
  });
  it("ages from nanoseconds, to now while running", () => {
    expect(age(1_000_000_000, 61_000_000_000)).toBe("1m 00s");
    expect(age(1_000_000_000, 0, 11_000)).toBe("10s");
    expect(age(0)).toBe("—");
  });
  it("counts instance-hours of live and terminated instances", () => {
    const hour = 3.6e12; // ns
    expect(instanceHours([{ launched_at: 1, terminated_at: 1 + 2 * hour }])).toBeCloseTo(2);
    expect(instanceHours([{ launched_at: hour, terminated_at: 0 }], 3 * 3.6e6)).toBeCloseTo(2);
    expect(instanceHours([{ launched_at: 0, terminated_at: 0 }])).toBe(0);
    expect(instanceHours([{ launched_at: 1, terminated_at: 1 + hour, state: "spot_requested" }])).toBe(0);
  });
  it("shows bytes, numbers, tones and progress", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MiB");
    expect(formatNumber(0.123456)).toBe("0.1235");
    expect(formatNumber(42)).toBe("42");
    expect(formatNumber(undefined)).toBe("—");
    expect(stateTone("COMPLETED")).toBe("good");
    expect(stateTone("ERROR")).toBe("bad");
    expect(stateTone("STOPPING_CANCELED")).toBe("idle");
    expect(stateTone("ACTIVE")).toBe("good");

  });
});

describe("countSlots", () => {
  const agent = (over: Partial<Agent>): Agent => ({
    id: "a", state: "connected", resource_pool: "default", hostname: "h", slots: 2,
    devices: [{ id: "0", type: "cuda", brand: "", uuid: "", memory_mib: 0 },
              { id: "1", type: "cuda", brand: "", uuid: "", memory_mib: 0 }],
    enabled: true, draining: false, disabled_slots: [], used_slots: 0, utilization: [],
    last_heard_ms_ago: 0, ...over,
  });
  it("counts used, free, disabled and offline slots without going negative", () => {
    const counts = countSlots([
      agent({ used_slots: 1 }),
      agent({ id: "b", enabled: false, used_slots: 1 }),  // disabled, still running one
      agent({ id: "c", state: "lost" }),
      agent({ id: "d", disabled_slots: ["1"] }),
    ]).get("cuda")!;
    expect(counts).toEqual({ total: 8, used: 2, free: 2, disabled: 2, offline: 2 });
  });
});

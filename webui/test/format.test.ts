import { age, formatBytes, formatDuration, formatNumber, instanceHours, progress, stateTone } from "../src/format";

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
    expect(progress({ trials: 4, trials_completed: 2, trials_errored: 1 })).toBe(0.75);
  });
});

// Formatting shared by the pages. Times on the wire are Unix nanoseconds (0: not yet).

export function nsToDate(ns: number): Date | null {
  return ns > 0 ? new Date(ns / 1e6) : null;
}

export function formatTime(ns: number): string {
  const date = nsToDate(ns);
  return date ? date.toLocaleString() : "—";
}

// "3s", "4m 05s", "2h 03m", "3d 4h".
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

// How long from `startNs` to `endNs`, or to `nowMs` while it runs.
export function age(startNs: number, endNs = 0, nowMs = Date.now()): string {
  if (startNs <= 0) return "—";
  const end = endNs > 0 ? endNs / 1e6 : nowMs;
  return formatDuration(end - startNs / 1e6);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export function formatNumber(value: unknown): string {
  if (typeof value !== "number") return value === undefined || value === null ? "—" : String(value);
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 1e4 || Math.abs(value) < 1e-3 ? value.toExponential(3) : value.toFixed(4);
}

// Instance-hours of instances, each from launch to termination or `nowMs` while it lives. Spot
// requests not yet fulfilled and stopped instances run nothing and cost nothing: left out.
export function instanceHours(
  instances: { launched_at: number; terminated_at: number; state?: string }[],
  nowMs = Date.now(),
): number {
  let ms = 0;
  for (const instance of instances) {
    if (instance.launched_at <= 0) continue;
    if (instance.state === "spot_requested" || instance.state === "stopped") continue;
    const end = instance.terminated_at > 0 ? instance.terminated_at / 1e6 : nowMs;
    ms += Math.max(0, end - instance.launched_at / 1e6);
  }
  return ms / 3.6e6;
}

// The colour family of a state, for badges.
export function stateTone(state: string): "good" | "busy" | "bad" | "idle" {
  const s = state.toUpperCase();
  if (["COMPLETED", "CONNECTED", "RUNNING", "ACTIVE", "IDLE"].includes(s)) return "good";
  if (["ERROR", "DELETE_FAILED", "LOST", "FAILED", "STOPPED"].includes(s)) return "bad";
  if (s.startsWith("STOPPING") || ["PAUSED", "CANCELED", "TERMINATED"].includes(s)) return "idle";
  return "busy";
}

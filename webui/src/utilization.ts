// Agents' slot utilisation, for the cluster page's heat strips (the pure parts: no React).
//
// What the agent reports (agent/utilization.cc): a GPU slot ("cuda") its nvidia-smi
// utilization.gpu and memory.used; every CPU slot the host's CPU busy share, memory 0. An agent
// offers a real CPU as one slot that stands for all of its cores (agent/devices.cc); more than
// one CPU slot on an agent means `artificial_slots: N` (testing), N fake CPU slots, each of which
// reports the same host CPU figure, so none of them is busy on its own.

import type { Agent } from "./types";

export interface SlotCell {
  id: string;
  type: string; // "cuda", "cpu", ... ("" for a utilisation figure of a slot the agent does not list)
  brand: string;
  percent: number | null; // null: no figure reported
  memoryUsedMib: number | null; // null: not measured (CPU slots, no figure)
  memoryMib: number; // the device's total, 0 when unknown
  disabled: boolean; // the slot or its agent is disabled
}

// The mean utilisation of the slots that report a finite figure, or null when none does.
export function meanUtilization(utilization: Agent["utilization"]): number | null {
  let sum = 0;
  let n = 0;
  for (const u of utilization) {
    if (!Number.isFinite(u.utilization_percent)) continue;
    sum += u.utilization_percent;
    ++n;
  }
  return n > 0 ? sum / n : null;
}

// "54%", or "—" without a figure.
export function formatPercent(percent: number | null): string {
  return percent === null || !Number.isFinite(percent) ? "—" : `${Math.round(percent)}%`;
}

export const NO_FIGURE_COLOUR = "#d1d5db";
// 0% → 50% → 100%: pale blue, blue, dark navy (each step darker, so idle and busy tell apart
// without colour vision too).
const STOPS: [number, number, number][] = [
  [224, 242, 254],
  [59, 130, 246],
  [30, 27, 75],
];

// The cell colour of a utilisation percentage (clamped to 0..100); grey without a figure.
export function utilizationColour(percent: number | null | undefined): string {
  if (percent === null || percent === undefined || !Number.isFinite(percent)) return NO_FIGURE_COLOUR;
  const t = Math.min(100, Math.max(0, percent)) / 100;
  const [a, b, u] = t <= 0.5 ? [STOPS[0], STOPS[1], t * 2] : [STOPS[1], STOPS[2], t * 2 - 1];
  const mix = (i: number) => Math.round(a[i] + (b[i] - a[i]) * u);
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

// Whether the agent's slots are artificial CPU slots (`artificial_slots`): more than one slot,
// all of type "cpu".
export function artificialSlots(devices: Agent["devices"]): boolean {
  return devices.length > 1 && devices.every((d) => d.type === "cpu");
}

// One cell per slot, in the agent's order (then any figure for a slot it does not list).
export function slotCells(
  agent: Pick<Agent, "devices" | "utilization" | "disabled_slots" | "enabled">,
): SlotCell[] {
  const figures = new Map(agent.utilization.map((u) => [u.slot_id, u]));
  const disabled = new Set(agent.disabled_slots);
  const cell = (id: string, type: string, brand: string, memoryMib: number): SlotCell => {
    const u = figures.get(id);
    const percent = u && Number.isFinite(u.utilization_percent) ? u.utilization_percent : null;
    const measured = u && type !== "cpu" && Number.isFinite(u.memory_used_mib);
    return {
      id,
      type,
      brand,
      percent,
      memoryUsedMib: measured ? u.memory_used_mib : null,
      memoryMib,
      disabled: !agent.enabled || disabled.has(id),
    };
  };
  const cells = agent.devices.map((d) => cell(d.id, d.type, d.brand, d.memory_mib ?? 0));
  const listed = new Set(agent.devices.map((d) => d.id));
  for (const u of agent.utilization) {
    if (!listed.has(u.slot_id)) cells.push(cell(u.slot_id, "", "", 0));
  }
  return cells;
}

function mib(value: number): string {
  return value >= 1024 ? `${(value / 1024).toFixed(1)} GiB` : `${Math.round(value)} MiB`;
}

// A cell's tooltip: "slot 0 (NVIDIA A100): 87%, memory 30.1 GiB of 40.0 GiB, disabled".
export function cellTitle(cell: SlotCell, artificial = false): string {
  const name = `slot ${cell.id}${cell.brand ? ` (${cell.brand})` : ""}`;
  let figure: string;
  if (artificial) figure = "artificial CPU slot, no figure of its own";
  else if (cell.percent === null) figure = "no utilisation reported";
  else figure = `${formatPercent(cell.percent)}${cell.type === "cpu" ? " (the host's CPU)" : ""}`;
  let memory = "";
  if (cell.memoryUsedMib !== null) {
    memory = `, memory ${mib(cell.memoryUsedMib)}${cell.memoryMib > 0 ? ` of ${mib(cell.memoryMib)}` : ""}`;
  } else if (!artificial && cell.type === "cpu") {
    memory = ", memory not measured";
  }
  return `${name}: ${figure}${memory}${cell.disabled ? ", disabled" : ""}`;
}

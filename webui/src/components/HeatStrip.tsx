// One agent's slots as a row of small cells (about 10×14 px): colour by utilisation, grey without
// a figure, hatched and outlined when the slot is disabled, a title per cell (slot, figure,
// memory). Artificial CPU slots have no figure of their own: their cells are left blank (dashed)
// rather than all painted with the host's CPU. Plain spans, no state: 1,000 strips of 8 cells
// render as 8,000 light elements, and a strip whose cells did not change since the last poll is
// not rendered again. Root: data-testid="heat-strip", data-slots.

import { memo } from "react";
import { cellTitle, formatPercent, utilizationColour, type SlotCell } from "../utilization";

interface Props {
  cells: SlotCell[];
  artificial?: boolean;
}

function sameCells(a: SlotCell[], b: SlotCell[]) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; ++i) {
    const x = a[i];
    const y = b[i];
    if (
      x.id !== y.id ||
      x.percent !== y.percent ||
      x.disabled !== y.disabled ||
      x.memoryUsedMib !== y.memoryUsedMib ||
      x.memoryMib !== y.memoryMib ||
      x.type !== y.type ||
      x.brand !== y.brand
    )
      return false;
  }
  return true;
}

export const HeatStrip = memo(
  Strip,
  (a, b) => (a.artificial ?? false) === (b.artificial ?? false) && sameCells(a.cells, b.cells),
);

function Strip({ cells, artificial = false }: Props) {
  const summary = artificial
    ? `${cells.length} artificial CPU slots`
    : cells.map((c) => `${c.id} ${formatPercent(c.percent)}${c.disabled ? " disabled" : ""}`).join(", ");
  return (
    <span
      className={artificial ? "heat-strip artificial" : "heat-strip"}
      data-testid="heat-strip"
      data-slots={cells.length}
      role="img"
      aria-label={`slots: ${summary || "none"}`}
    >
      {cells.map((cell) => (
        <span
          key={cell.id}
          className={cell.disabled ? "heat-cell disabled" : "heat-cell"}
          style={artificial ? undefined : { backgroundColor: utilizationColour(cell.percent) }}
          title={cellTitle(cell, artificial)}
        />
      ))}
    </span>
  );
}

// Many trials' learning curves on one chart: the pure parts (no React, no DOM). Each curve keeps
// its own steps (curves do not share x values); non-finite values are gaps, never drawn or
// measured. Pixel coordinates come from the chart (`components/OverlayChart.tsx`).

export interface Curve {
  id: number; // the trial's
  label: string; // "trial 12"
  steps: number[]; // x, ascending
  values: number[]; // y, one per step (NaN: no value)
}

export interface Extent {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

// TensorBoard's smoothing: an exponential moving average debiased by 1 - weight^n (so the first
// smoothed value is the first value, not weight times less). Weight is clamped to [0, 0.99]; 0
// returns a copy. A non-finite value passes through as it is and leaves the average untouched.
export function smooth(values: number[], weight: number): number[] {
  const w = Number.isFinite(weight) ? Math.min(0.99, Math.max(0, weight)) : 0;
  if (w === 0) return values.slice();
  const out = new Array<number>(values.length);
  let last = 0;
  let scale = 1; // weight^n over the finite values so far
  for (let i = 0; i < values.length; ++i) {
    const v = values[i];
    if (!Number.isFinite(v)) {
      out[i] = v;
      continue;
    }
    last = last * w + (1 - w) * v;
    scale *= w;
    out[i] = last / (1 - scale);
  }
  return out;
}

// The range of every finite (step, value) point; a flat range is padded (y by 10% of its value,
// or 1 at zero; x by 1) so that it can be scaled. No point at all: 0..1 both ways.
export function extent(curves: Curve[]): Extent {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const curve of curves) {
    const n = Math.min(curve.steps.length, curve.values.length);
    for (let i = 0; i < n; ++i) {
      const x = curve.steps[i];
      const y = curve.values[i];
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (x0 > x1) return { x0: 0, x1: 1, y0: 0, y1: 1 };
  if (x0 === x1) {
    x0 -= 1;
    x1 += 1;
  }
  if (y0 === y1) {
    const pad = Math.abs(y0) * 0.1 || 1;
    y0 -= pad;
    y1 += pad;
  }
  return { x0, x1, y0, y1 };
}

// Squared distance from (px, py) to the segment (ax, ay)-(bx, by).
function segmentDistance2(px: number, py: number, ax: number, ay: number, bx: number, by: number) {
  const dx = bx - ax;
  const dy = by - ay;
  const length2 = dx * dx + dy * dy;
  let t = length2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / length2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = ax + t * dx - px;
  const ey = ay + t * dy - py;
  return ex * ex + ey * ey;
}

// The id of the curve whose polyline passes closest to the pointer, within `maxDistance` pixels,
// or null. `scaled[i]` is curves[i] in pixels; a non-finite coordinate breaks the line there (a
// lone point between gaps counts as a vertex). Ties go to the later curve (drawn on top).
export function nearestCurve(
  curves: Curve[],
  scaled: { x: number[]; y: number[] }[],
  px: number,
  py: number,
  maxDistance: number,
): number | null {
  let best: number | null = null;
  let bestD2 = maxDistance * maxDistance;
  const n = Math.min(curves.length, scaled.length);
  for (let c = 0; c < n; ++c) {
    const { x, y } = scaled[c];
    const m = Math.min(x.length, y.length);
    let hasPrev = false;
    let ax = 0;
    let ay = 0;
    for (let i = 0; i < m; ++i) {
      const bx = x[i];
      const by = y[i];
      if (!Number.isFinite(bx) || !Number.isFinite(by)) {
        hasPrev = false;
        continue;
      }
      const nextOk = i + 1 < m && Number.isFinite(x[i + 1]) && Number.isFinite(y[i + 1]);
      let d2 = Infinity;
      if (hasPrev) d2 = segmentDistance2(px, py, ax, ay, bx, by);
      else if (!nextOk) d2 = (bx - px) * (bx - px) + (by - py) * (by - py); // a lone point
      if (d2 <= bestD2) {
        bestD2 = d2;
        best = curves[c].id;
      }
      ax = bx;
      ay = by;
      hasPrev = true;
    }
  }
  return best;
}

// Ten colours that tell apart on white (Tableau 10); curve i gets colorOf(i).
const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
];

export function colorOf(index: number): string {
  const i = Math.abs(Math.trunc(index)) % PALETTE.length;
  return PALETTE[Number.isFinite(i) ? i : 0];
}

// About `count` round tick values (1, 2 or 5 times a power of ten) covering lo..hi.
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo || count < 1) return [];
  const raw = (hi - lo) / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out: number[] = [];
  const last = Math.floor(hi / step + 1e-9);
  for (let k = Math.ceil(lo / step - 1e-9); k <= last; ++k) {
    out.push(k === 0 ? 0 : Number((k * step).toPrecision(12)));
  }
  return out;
}

// The last finite value of a curve and its step, or null.
export function lastValue(curve: Curve): { step: number; value: number } | null {
  for (let i = Math.min(curve.steps.length, curve.values.length) - 1; i >= 0; --i) {
    if (Number.isFinite(curve.values[i])) return { step: curve.steps[i], value: curve.values[i] };
  }
  return null;
}

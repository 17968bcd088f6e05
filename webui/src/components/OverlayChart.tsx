// Many trials' learning curves over one another, drawn by hand on a <canvas> (curves do not share
// steps, which uPlot's aligned columns want). The canvas follows its container's width and the
// screen's pixel ratio; each change redraws in one animation frame. The axes and all curves are
// kept on an off-screen layer, redrawn only when the curves, size or dimming change, so moving the
// highlight over 500 curves of 200 points costs one copy and one curve. The highlighted curve
// (the caller's: hover or keys report it through onHover) is drawn last and thicker, the others
// dimmed; with smoothing the raw curves are drawn faint underneath. Keys on the focused canvas:
// ← → pick the previous or next curve, Escape clears. Root: data-testid="overlay-chart",
// data-curves, data-highlight.

import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from "react";
import { formatNumber } from "../format";
import { colorOf, extent, lastValue, nearestCurve, smooth, ticks, type Curve, type Extent } from "../overlay";

export interface OverlayChartProps {
  curves: Curve[];
  smoothing: number; // 0..0.99
  highlight: number | null; // a curve's id
  onHover: (id: number | null) => void;
  xLabel?: string;
  yLabel?: string;
  height?: number; // CSS pixels
}

const MARGIN = { left: 64, right: 16, top: 12, bottom: 40 };
const HIT_PIXELS = 8;
const FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

type Scaled = { x: number[]; y: number[] };

// Data → CSS pixels inside the plot area.
function scales(range: Extent, width: number, height: number) {
  const w = Math.max(1, width - MARGIN.left - MARGIN.right);
  const h = Math.max(1, height - MARGIN.top - MARGIN.bottom);
  const sx = (x: number) => MARGIN.left + ((x - range.x0) / (range.x1 - range.x0)) * w;
  const sy = (y: number) => MARGIN.top + (1 - (y - range.y0) / (range.y1 - range.y0)) * h;
  return { sx, sy, w, h };
}

function project(curves: Curve[], values: number[][], sx: (x: number) => number, sy: (y: number) => number): Scaled[] {
  return curves.map((curve, c) => {
    const ys = values[c];
    const n = Math.min(curve.steps.length, ys.length);
    const x = new Array<number>(n);
    const y = new Array<number>(n);
    for (let i = 0; i < n; ++i) {
      const ok = Number.isFinite(curve.steps[i]) && Number.isFinite(ys[i]);
      x[i] = ok ? sx(curve.steps[i]) : NaN;
      y[i] = ok ? sy(ys[i]) : NaN;
    }
    return { x, y };
  });
}

// Adds one polyline to the current path; gaps (NaN) lift the pen.
function trace(ctx: CanvasRenderingContext2D, p: Scaled) {
  let down = false;
  for (let i = 0; i < p.x.length; ++i) {
    const x = p.x[i];
    const y = p.y[i];
    if (x !== x || y !== y) {
      down = false;
      continue;
    }
    if (down) ctx.lineTo(x, y);
    else ctx.moveTo(x, y);
    down = true;
  }
}

function tickText(v: number): string {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(1);
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(4))}k`;
  return String(Number(v.toPrecision(6)));
}

interface Frame {
  curves: Curve[];
  shown: Scaled[];
  raw: Scaled[] | null; // the unsmoothed curves, when smoothed
  range: Extent;
  width: number;
  height: number;
  highlight: number; // index into curves, -1: none
  xLabel: string;
  yLabel: string;
}

// The axes and every curve (dimmed or not) on an off-screen canvas, kept while its inputs stay the
// same: moving the highlight then costs one copy and one curve.
interface Background {
  canvas: HTMLCanvasElement;
  inputs: unknown[];
}

function sameInputs(a: unknown[], b: unknown[]) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function drawAxes(ctx: CanvasRenderingContext2D, f: Frame) {
  const { sx, sy, w, h } = scales(f.range, f.width, f.height);
  ctx.font = FONT;
  ctx.lineWidth = 1;
  ctx.strokeStyle = "#e5e7eb";
  ctx.fillStyle = "#6b7280";
  ctx.beginPath();
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const v of ticks(f.range.y0, f.range.y1, Math.max(2, Math.round(h / 50)))) {
    const y = Math.round(sy(v)) + 0.5;
    ctx.moveTo(MARGIN.left, y);
    ctx.lineTo(MARGIN.left + w, y);
    ctx.fillText(tickText(v), MARGIN.left - 6, y);
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const v of ticks(f.range.x0, f.range.x1, Math.max(2, Math.round(w / 90)))) {
    const x = Math.round(sx(v)) + 0.5;
    ctx.moveTo(x, MARGIN.top);
    ctx.lineTo(x, MARGIN.top + h);
    ctx.fillText(tickText(v), x, MARGIN.top + h + 4);
  }
  ctx.stroke();
  ctx.strokeStyle = "#9ca3af";
  ctx.strokeRect(MARGIN.left + 0.5, MARGIN.top + 0.5, w, h);
  ctx.fillText(f.xLabel, MARGIN.left + w / 2, MARGIN.top + h + 20);
  if (f.yLabel) {
    ctx.save();
    ctx.translate(12, MARGIN.top + h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(f.yLabel, 0, 0);
    ctx.restore();
  }
  if (f.curves.length === 0) {
    ctx.textBaseline = "middle";
    ctx.fillText("No points yet", MARGIN.left + w / 2, MARGIN.top + h / 2);
  }
}

function clipToPlot(ctx: CanvasRenderingContext2D, f: Frame) {
  const { w, h } = scales(f.range, f.width, f.height);
  ctx.beginPath();
  ctx.rect(MARGIN.left, MARGIN.top, w, h);
  ctx.clip();
  ctx.lineJoin = "round";
}

// Each curve its own path: one path over many overlapping curves is slower to stroke with
// transparency. With many points, lines one device pixel wide (the rasterizer's fast path).
function drawCurves(ctx: CanvasRenderingContext2D, f: Frame, dpr: number, dim: boolean) {
  let points = 0;
  for (const line of f.shown) points += line.x.length;
  const hair = 1 / dpr;
  const width = points > 20000 ? hair : 1.25;
  const layer = (lines: Scaled[], alpha: number, lineWidth: number) => {
    ctx.globalAlpha = alpha;
    ctx.lineWidth = lineWidth;
    for (let i = 0; i < lines.length; ++i) {
      ctx.strokeStyle = colorOf(i);
      ctx.beginPath();
      trace(ctx, lines[i]);
      ctx.stroke();
    }
  };
  if (f.raw) layer(f.raw, dim ? 0.08 : 0.2, hair);
  layer(f.shown, dim ? 0.25 : 0.85, width);
  ctx.globalAlpha = 1;
}

function draw(canvas: HTMLCanvasElement, f: Frame, cache: { current: Background | null }) {
  const dpr = window.devicePixelRatio || 1;
  const pw = Math.round(f.width * dpr);
  const ph = Math.round(f.height * dpr);
  const dim = f.highlight >= 0;
  const inputs = [f.curves, f.shown, f.raw, f.range, f.width, f.height, dpr, dim, f.xLabel, f.yLabel];
  let background = cache.current;
  if (!background || !sameInputs(background.inputs, inputs)) {
    const layer = background?.canvas ?? document.createElement("canvas");
    layer.width = pw; // also clears it
    layer.height = ph;
    const bg = layer.getContext("2d");
    if (!bg) return;
    bg.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawAxes(bg, f);
    bg.save();
    clipToPlot(bg, f);
    drawCurves(bg, f, dpr, dim);
    bg.restore();
    background = { canvas: layer, inputs };
    cache.current = background;
  }

  if (canvas.width !== pw) canvas.width = pw;
  if (canvas.height !== ph) canvas.height = ph;
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, pw, ph);
  ctx.drawImage(background.canvas, 0, 0);
  if (!dim) return;
  // The highlighted curve on top: its raw points faint, the curve thick.
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.save();
  clipToPlot(ctx, f);
  ctx.strokeStyle = colorOf(f.highlight);
  if (f.raw) {
    ctx.globalAlpha = 0.35;
    ctx.lineWidth = 1;
    ctx.beginPath();
    trace(ctx, f.raw[f.highlight]);
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 2.5;
  ctx.beginPath();
  trace(ctx, f.shown[f.highlight]);
  ctx.stroke();
  ctx.restore();
}

export function OverlayChart({
  curves,
  smoothing,
  highlight,
  onHover,
  xLabel = "batches",
  yLabel = "",
  height = 320,
}: OverlayChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const background = useRef<Background | null>(null);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    setWidth(Math.floor(element.clientWidth));
    const resized = new ResizeObserver((entries) => {
      setWidth(Math.floor(entries[0]?.contentRect.width ?? 0));
    });
    resized.observe(element);
    return () => resized.disconnect();
  }, []);

  const smoothed = useMemo(
    () => (smoothing > 0 ? curves.map((c) => smooth(c.values, smoothing)) : null),
    [curves, smoothing],
  );
  const range = useMemo(() => extent(curves), [curves]);
  const { shown, raw } = useMemo(() => {
    const { sx, sy } = scales(range, width, height);
    const rawValues = curves.map((c) => c.values);
    const raw = project(curves, rawValues, sx, sy);
    return smoothed ? { shown: project(curves, smoothed, sx, sy), raw } : { shown: raw, raw: null };
  }, [curves, smoothed, range, width, height]);
  const at = highlight === null ? -1 : curves.findIndex((c) => c.id === highlight);

  useEffect(() => {
    const element = canvas.current;
    if (!element || width <= 0) return;
    const frame = requestAnimationFrame(() => {
      draw(element, { curves, shown, raw, range, width, height, highlight: at, xLabel, yLabel }, background);
      element.dataset.drawn = String(curves.length);  // how many curves are on screen (tests wait for it)
    });
    return () => cancelAnimationFrame(frame);
  }, [curves, shown, raw, range, width, height, at, xLabel, yLabel]);

  const hover = (id: number | null) => {
    if (id !== highlight) onHover(id);
  };
  const onPointerMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    hover(nearestCurve(curves, shown, e.clientX - r.left, e.clientY - r.top, HIT_PIXELS));
  };
  const onKeyDown = (e: KeyboardEvent<HTMLCanvasElement>) => {
    const n = curves.length;
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      if (n === 0) return;
      e.preventDefault();
      const next =
        e.key === "ArrowRight" ? (at < 0 ? 0 : (at + 1) % n) : at < 0 ? n - 1 : (at - 1 + n) % n;
      hover(curves[next].id);
    } else if (e.key === "Escape" && highlight !== null) {
      e.preventDefault();
      hover(null);
    }
  };

  const picked = at >= 0 ? curves[at] : null;
  const last = picked ? lastValue(picked) : null;
  const lastSmoothed = picked && smoothed ? lastValue({ ...picked, values: smoothed[at] }) : null;
  return (
    <div
      className="overlay-chart"
      data-testid="overlay-chart"
      data-curves={curves.length}
      data-highlight={highlight ?? ""}
    >
      <div className="overlay-canvas" ref={box}>
        <canvas
          ref={canvas}
          style={{ width: `${width}px`, height: `${height}px` }}
          tabIndex={0}
          role="img"
          aria-label={`${curves.length} learning curves${yLabel ? ` of ${yLabel}` : ""}; arrow keys pick a curve, Escape clears`}
          onPointerMove={onPointerMove}
          onPointerLeave={() => hover(null)}
          onKeyDown={onKeyDown}
        />
      </div>
      <div className="overlay-legend" aria-live="polite">
        {picked ? (
          <>
            <span className="overlay-swatch" style={{ background: colorOf(at) }} />
            <strong>{picked.label}</strong>
            {last ? (
              <span>
                {" "}
                last {formatNumber(last.value)} at step {last.step}
                {lastSmoothed ? ` (smoothed ${formatNumber(lastSmoothed.value)})` : ""}
              </span>
            ) : (
              <span className="muted"> no value yet</span>
            )}
          </>
        ) : (
          <span className="muted">
            {curves.length} curves · point at one, or focus the chart and use ← → (Escape clears)
          </span>
        )}
      </div>
    </div>
  );
}

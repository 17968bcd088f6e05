// Parallel coordinates of a search: one vertical axis per varying hyperparameter and the metric
// last, one line per trial coloured by its metric (hparams.ts `metricColor`, best yellow), lines
// outside the brushes faint grey. Brushes are the caller's (`brushes`/`onBrush`): drag along an
// axis to brush it, click it to clear; focused, ↑/↓ narrow from the bottom/top, Shift+↑/↓ move
// the brush, Escape clears. Hand-written SVG, as wide as its box (scrolls when axes are many).

import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from "react";
import {
  axesOf,
  type Axis,
  brushed,
  type Brushes,
  clip,
  describeRange,
  formatValue,
  goodness,
  type HpTrial,
  metricColor,
  NO_METRIC_COLOR,
  position,
  shortNumber,
  valueOf,
} from "../hparams";

const HEIGHT = 320;
const TOP = 44; // the axes run from TOP (position 1) down to BOTTOM (position 0)
const BOTTOM = 290;
const LEFT = 40;
const RIGHT = 80;
const MIN_SPACING = 90; // narrower boxes scroll
const STEP = 0.05; // a key press moves a brush edge this far
const MIN_BRUSH = 0.02;
const FAINT = "#d1d5db";

const clamp01 = (t: number) => Math.min(1, Math.max(0, t));
const yOf = (t: number) => BOTTOM - clamp01(t) * (BOTTOM - TOP);

// The ticks of an axis: min and max of a number axis, its categories (thinned when crowded).
function ticks(axis: Axis): { t: number; label: string }[] {
  if (axis.kind === "number") {
    if (axis.max === axis.min) return [{ t: 0.5, label: shortNumber(axis.min) }];
    return [
      { t: 0, label: shortNumber(axis.min) },
      { t: 1, label: shortNumber(axis.max) },
    ];
  }
  const every = Math.ceil(axis.categories.length / 12);
  return axis.categories
    .map((c) => ({ t: position(axis, c) ?? 0, label: c }))
    .filter((_, i, all) => i % every === 0 || i === all.length - 1);
}

// Keyboard: ↑ raises the bottom edge, ↓ lowers the top edge, Shift moves the whole brush.
function keyed(range: [number, number] | undefined, up: boolean, shift: boolean): [number, number] {
  let [lo, hi] = range ?? [0, 1];
  if (shift) {
    const width = hi - lo;
    lo = Math.min(1 - width, Math.max(0, lo + (up ? STEP : -STEP)));
    return [lo, lo + width];
  }
  if (up) lo = Math.min(hi - MIN_BRUSH, lo + STEP);
  else hi = Math.max(lo + MIN_BRUSH, hi - STEP);
  return [clamp01(lo), clamp01(hi)];
}

export function ParallelCoordinates({
  trials,
  metricName,
  smallerIsBetter,
  brushes,
  onBrush,
  highlight = null,
  onHover,
}: {
  trials: HpTrial[];
  metricName: string;
  smallerIsBetter: boolean;
  brushes: Brushes;
  onBrush: (b: Brushes) => void;
  highlight?: number | null;
  onHover?: (id: number | null) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const hint = useId();
  const [boxWidth, setBoxWidth] = useState(800);
  const drag = useRef<{ key: string; start: number; startY: number; moved: boolean } | null>(null);
  const [draft, setDraft] = useState<{ key: string; range: [number, number] } | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const update = (w: number) => setBoxWidth(Math.max(320, Math.round(w || 800)));
    update(el.clientWidth);
    const observer = new ResizeObserver((entries) => update(entries[0]?.contentRect.width ?? 0));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const axes = useMemo(() => axesOf(trials, metricName), [trials, metricName]);
  const metricAxis = axes[axes.length - 1];
  const hasMetric = trials.some((t) => valueOf(t, metricName, metricName) !== null);
  const width = Math.max(boxWidth, LEFT + RIGHT + MIN_SPACING * Math.max(0, axes.length - 1));
  const spacing = axes.length > 1 ? (width - LEFT - RIGHT) / (axes.length - 1) : 0;
  const xOf = (i: number) => (axes.length > 1 ? LEFT + i * spacing : width / 2);

  const lines = useMemo(
    () =>
      trials.map((trial) => {
        const points: string[] = [];
        axes.forEach((axis, i) => {
          const p = position(axis, valueOf(trial, axis.key, metricName));
          if (p !== null) points.push(`${xOf(i).toFixed(1)},${yOf(p).toFixed(1)}`);
        });
        const good = goodness(metricAxis, trial.metric, smallerIsBetter);
        return {
          id: trial.id,
          points: points.join(" "),
          colour: good === null ? NO_METRIC_COLOR : metricColor(good),
          title: `trial ${trial.id}: ${metricName} ${formatValue(valueOf(trial, metricName, metricName))}`,
        };
      }),
    // xOf depends only on width and the axes
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [trials, axes, metricAxis, metricName, smallerIsBetter, width],
  );

  const shown: Brushes = draft ? { ...brushes, [draft.key]: draft.range } : brushes;
  const selected = useMemo(
    () => brushed(trials, axes, shown, metricName),
    // `shown` is rebuilt each render; its contents are what matter
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [trials, axes, metricName, JSON.stringify(shown)],
  );

  const without = (key: string) => {
    const next = { ...brushes };
    delete next[key];
    return next;
  };

  // The axis position under the pointer (beyond the ends: the ends).
  const positionAt = (e: PointerEvent) => {
    const rect = svg.current?.getBoundingClientRect();
    if (!rect || rect.height === 0) return 0;
    const y = (e.clientY - rect.top) * (HEIGHT / rect.height);
    return clamp01((BOTTOM - y) / (BOTTOM - TOP));
  };

  const down = (key: string) => (e: PointerEvent<SVGGElement>) => {
    if (e.button !== 0) return;
    drag.current = { key, start: positionAt(e), startY: e.clientY, moved: false };
    try {
      e.currentTarget.setPointerCapture(e.pointerId);
    } catch {
      // a synthetic event without a live pointer: the drag still works inside the axis
    }
  };
  const move = (key: string) => (e: PointerEvent<SVGGElement>) => {
    const d = drag.current;
    if (!d || d.key !== key) return;
    if (Math.abs(e.clientY - d.startY) > 3) d.moved = true;
    if (!d.moved) return;
    const t = positionAt(e);
    setDraft({ key, range: [Math.min(d.start, t), Math.max(d.start, t)] });
  };
  const up = (key: string) => (e: PointerEvent<SVGGElement>) => {
    const d = drag.current;
    if (!d || d.key !== key) return;
    drag.current = null;
    setDraft(null);
    if (d.moved) {
      const t = positionAt(e);
      onBrush({ ...brushes, [key]: [Math.min(d.start, t), Math.max(d.start, t)] });
    } else if (brushes[key]) {
      onBrush(without(key));
    }
  };
  const cancel = () => {
    drag.current = null;
    setDraft(null);
  };
  const keyDown = (key: string) => (e: KeyboardEvent<SVGGElement>) => {
    if (e.key === "Escape") {
      if (!brushes[key]) return;
      e.preventDefault();
      onBrush(without(key));
    } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      e.preventDefault();
      onBrush({ ...brushes, [key]: keyed(brushes[key], e.key === "ArrowUp", e.shiftKey) });
    }
  };

  const order = (id: number) => (id === highlight ? 2 : selected.has(id) ? 1 : 0);
  const drawn = [...lines].sort((a, b) => order(a.id) - order(b.id));
  const nameChars = Math.max(6, Math.floor((axes.length > 1 ? spacing : width) / 7));
  const tickChars = Math.max(4, Math.floor((axes.length > 1 ? spacing : 120) / 7) - 2);

  return (
    <div className="hp-view" data-testid="parallel-coordinates">
      <div className="hp-plot hp-scroll" ref={box}>
        <svg
          ref={svg}
          className="pc"
          viewBox={`0 0 ${width} ${HEIGHT}`}
          width={width === boxWidth ? "100%" : width}
          height={HEIGHT}
          role="group"
          aria-label={`Parallel coordinates of ${trials.length} trials`}
        >
          <g>
            {drawn.map((line) => {
              const on = selected.has(line.id);
              const lit = line.id === highlight;
              return (
                <polyline
                  key={line.id}
                  data-testid="pc-line"
                  data-trial={line.id}
                  data-selected={on ? "true" : "false"}
                  className="pc-line"
                  points={line.points}
                  fill="none"
                  stroke={on || lit ? line.colour : FAINT}
                  strokeOpacity={on || lit ? 0.9 : 0.6}
                  strokeWidth={lit ? 3.5 : 1.5}
                  onPointerEnter={onHover ? () => onHover(line.id) : undefined}
                  onPointerLeave={onHover ? () => onHover(null) : undefined}
                >
                  <title>{line.title}</title>
                </polyline>
              );
            })}
          </g>
          {axes.map((axis, i) => {
            const x = xOf(i);
            const range = shown[axis.key];
            const isMetric = i === axes.length - 1;
            const name = `${axis.key}${axis.log ? " (log)" : ""}`;
            return (
              <g
                key={axis.key}
                className="pc-axis"
                data-testid="pc-axis"
                data-key={axis.key}
                tabIndex={0}
                role="slider"
                aria-orientation="vertical"
                aria-label={`${isMetric ? "metric" : "hyperparameter"} ${axis.key} axis`}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={range ? Math.round(((range[0] + range[1]) / 2) * 100) : 50}
                aria-valuetext={range ? `brushed to ${describeRange(axis, range)}` : "no brush"}
                aria-describedby={hint}
                onPointerDown={down(axis.key)}
                onPointerMove={move(axis.key)}
                onPointerUp={up(axis.key)}
                onPointerCancel={cancel}
                onKeyDown={keyDown(axis.key)}
              >
                <rect className="pc-hit" x={x - 14} y={TOP - 6} width={28} height={BOTTOM - TOP + 12} />
                <line className="pc-track" x1={x} x2={x} y1={TOP} y2={BOTTOM} />
                <text className="pc-name" x={x} y={14} textAnchor="middle">
                  {clip(name, nameChars)}
                  <title>{name}</title>
                </text>
                {(isMetric && !hasMetric ? [] : ticks(axis)).map((tick) =>
                  axis.kind === "number" ? (
                    <text
                      key={tick.t}
                      className="pc-tick"
                      x={x}
                      y={tick.t === 0 ? BOTTOM + 16 : tick.t === 1 ? TOP - 10 : yOf(tick.t) + 4}
                      textAnchor="middle"
                    >
                      {tick.label}
                    </text>
                  ) : (
                    <text key={tick.label} className="pc-tick" x={x + 6} y={yOf(tick.t) + 4}>
                      {clip(tick.label, tickChars)}
                    </text>
                  ),
                )}
                {range ? (
                  <rect
                    className="pc-brush"
                    x={x - 9}
                    y={yOf(Math.max(range[0], range[1]))}
                    width={18}
                    height={Math.max(2, Math.abs(yOf(range[0]) - yOf(range[1])))}
                  />
                ) : null}
              </g>
            );
          })}
        </svg>
      </div>
      <p className="muted hp-hint" id={hint}>
        Drag along an axis to keep the trials in a range; click an axis to clear it. With an axis
        focused: ↑/↓ narrow its range, Shift+↑/↓ move it, Escape clears it.
      </p>
    </div>
  );
}

// Learning curves with uPlot: one line per metric (validation dashed), steps on x. The chart is
// made once and fed new data as points arrive, so it keeps up with a live trial.

import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Series } from "../series";

const COLOURS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#be185d"];

function options(series: Series, width: number, logScale: boolean): uPlot.Options {
  return {
    width,
    height: 280,
    scales: { x: { time: false }, y: logScale ? { distr: 3 } : {} },
    axes: [{ label: "batches" }, {}],
    series: [
      { label: "step" },
      ...series.curves.map((curve, i) => ({
        label: `${curve.metric} (${curve.kind})`,
        stroke: COLOURS[i % COLOURS.length],
        width: 2,
        dash: curve.kind === "validation" ? [6, 4] : undefined,
        points: { show: curve.kind === "validation" },
        spanGaps: true,
      })),
    ],
  };
}

export function Chart({ series }: { series: Series }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [logScale, setLogScale] = useState(false);
  const labels = series.curves.map((c) => c.label).join("|");

  useEffect(() => {
    if (!box.current) return;
    const style = getComputedStyle(box.current);
    const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const width = Math.max(320, box.current.clientWidth - padding);
    const chart = new uPlot(
      options(series, width, logScale),
      [series.steps, ...series.values] as uPlot.AlignedData,
      box.current,
    );
    plot.current = chart;
    const resized = new ResizeObserver((entries) => {
      const width = entries[0]?.contentRect.width ?? 0;  // inside the padding
      chart.setSize({ width: Math.max(320, width), height: 280 });
    });
    resized.observe(box.current);
    return () => {
      resized.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // A new set of curves (or scale) needs a new chart; new points only new data (below).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [labels, logScale]);

  // New points only (the caller memoizes `series`): uPlot rescales to them.
  useEffect(() => {
    plot.current?.setData([series.steps, ...series.values] as uPlot.AlignedData);
  }, [series, labels]);

  return (
    <>
      <div className="log-bar">
        <span className="muted">drag to zoom, double-click to reset</span>
        <label>
          <input
            type="checkbox"
            checked={logScale}
            onChange={(e) => setLogScale(e.target.checked)}
          />{" "}
          log scale
        </label>
      </div>
      <div
        className="chart"
        ref={box}
        data-testid="learning-curve"
        data-points={series.steps.length}
      />
    </>
  );
}

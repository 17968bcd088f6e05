import { best, buildSeries, decimate } from "../src/series";
import { compareHref, parseRoute } from "../src/router";

describe("series", () => {
  it("decimates a long curve to its extremes per range, keeping the ends whole", () => {
    const points = Array.from({ length: 100000 }, (_, step) => ({
      step,
      run_id: 1,
      metrics: { loss: step === 777 ? 99 : step === 54321 ? -99 : Math.sin(step / 100), note: "x" },
    }));
    const kept = decimate(points, 2000);
    const losses = kept.filter((p) => typeof p.metrics.loss === "number");
    expect(losses.length).toBeLessThanOrEqual(2002);
    expect(losses.length).toBeGreaterThanOrEqual(1000);
    expect(kept.find((p) => p.step === 777)?.metrics.loss).toBe(99);
    expect(kept.find((p) => p.step === 54321)?.metrics.loss).toBe(-99);
    expect(kept[0]).toEqual({ step: 0, run_id: 1, metrics: { loss: 0, note: "x" } });
    expect(kept[kept.length - 1].step).toBe(99999);
    for (let i = 1; i < kept.length; ++i) expect(kept[i].step).toBeGreaterThan(kept[i - 1].step);
    for (const p of losses) expect(p.metrics.loss).toBe(points[p.step].metrics.loss);
    expect(decimate(points.slice(0, 10), 2000)).toHaveLength(10);
  });
  it("puts training and validation metrics on one step axis", () => {
    const series = buildSeries(
      [
        { step: 10, run_id: 1, metrics: { loss: 1.0 } },
        { step: 20, run_id: 1, metrics: { loss: 0.5, note: "text" } },
      ],
      [{ step: 20, run_id: 1, metrics: { validation_loss: 0.6, batches: 20 } }],
    );
    expect(series.steps).toEqual([10, 20]);
    expect(series.curves.map((c) => c.label)).toEqual(["training loss", "validation validation_loss"]);
    expect(series.values).toEqual([
      [1.0, 0.5],
      [null, 0.6],
    ]);
  });
  it("keeps the latest run's value of a step reported twice", () => {
    const series = buildSeries(
      [
        { step: 10, run_id: 1, metrics: { loss: 1.0 } },
        { step: 10, run_id: 2, metrics: { loss: 0.9 } },
      ],
      [],
    );
    expect(series.values).toEqual([[0.9]]);
  });
  it("finds the best validation value either way", () => {
    const points = [
      { step: 1, run_id: 1, metrics: { acc: 0.5 } },
      { step: 2, run_id: 1, metrics: { acc: 0.8 } },
    ];
    expect(best(points, "acc")).toEqual({ step: 1, value: 0.5 });
    expect(best(points, "acc", false)).toEqual({ step: 2, value: 0.8 });
    expect(best(points, "loss")).toBeNull();
  });
  it("routes hashes to pages", () => {
    expect(parseRoute("#/experiments/3")).toEqual({ page: "experiment", id: 3 });
    expect(parseRoute("#/experiments")).toEqual({ page: "experiments" });
    expect(parseRoute("#/trials/7")).toEqual({ page: "trial", id: 7 });
    expect(parseRoute("")).toEqual({ page: "cluster" });
    expect(parseRoute("#/nonsense")).toEqual({ page: "cluster" });
    expect(parseRoute("#/compare?trials=4,2,x,4,-1")).toEqual({ page: "compare", trials: [4, 2] });
    expect(parseRoute("#/compare")).toEqual({ page: "compare", trials: [] });
    expect(parseRoute(compareHref([3, 9]))).toEqual({ page: "compare", trials: [3, 9] });
  });
});

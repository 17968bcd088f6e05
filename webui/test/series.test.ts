import { best, buildSeries } from "../src/series";
import { parseRoute } from "../src/router";

describe("series", () => {
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
  });
});

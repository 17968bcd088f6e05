import { describe, expect, it } from "vitest";
import { logCurve } from "../src/components/CurvesPanel";
import { hparamKeys } from "../src/components/TrialsTable";
import type { ApiTrial } from "../src/determined";
import { choiceKey, choicesOf, curvesOfSeries, curvesOfTimeSeries, parseChoice } from "../src/curves";
import { sideBySide } from "../src/pages/Compare";
import type { Trial } from "../src/types";

const trial = (id: number, hparams: Record<string, unknown>, best: Record<string, number> = {}) =>
  ({ id, experiment_id: 2, hparams, best_validation: best }) as unknown as Trial;

describe("metric choices", () => {
  it("offers validation metrics first, the searcher's first of all, and round-trips keys", () => {
    const choices = choicesOf({ training: ["loss"], validation: ["accuracy", "val_loss", "b:c"] }, "val_loss");
    expect(choices.map(choiceKey)).toEqual([
      "validation:val_loss",
      "validation:accuracy",
      "validation:b:c",
      "training:loss",
    ]);
    expect(parseChoice("validation:b:c")).toEqual({ group: "validation", name: "b:c" });
  });
});

describe("curves from the master's answers", () => {
  it("keeps one metric's series per trial", () => {
    const curves = curvesOfSeries(
      {
        experimentId: 1,
        group: "validation",
        names: {},
        series: [
          { trialId: 4, name: "loss", steps: [1, 2], values: [0.5, 0.4], downsampled: false },
          { trialId: 4, name: "acc", steps: [1], values: [0.9], downsampled: false },
          { trialId: 5, name: "loss", steps: [3], values: [0.2], downsampled: true },
        ],
      },
      "loss",
    );
    expect(curves).toEqual([
      { id: 4, label: "trial 4", steps: [1, 2], values: [0.5, 0.4] },
      { id: 5, label: "trial 5", steps: [3], values: [0.2] },
    ]);
  });
  it("reads Determined's CompareTrials points, skipping values that are not numbers", () => {
    const curves = curvesOfTimeSeries(
      {
        trials: [
          {
            trial: { id: 7, experimentId: 2, state: "STATE_ACTIVE" } as ApiTrial,
            metrics: [
              {
                group: "validation",
                data: [
                  { batches: 10, values: { loss: 1 } },
                  { batches: 20, values: { loss: "NaN" } },
                  { batches: 30, values: { other: 3 } },
                  { batches: 40, values: { loss: 0.5 } },
                ],
              },
            ],
          },
          { trial: { id: 8, experimentId: 2, state: "STATE_ACTIVE" } as ApiTrial, metrics: [] },
        ],
      },
      "loss",
    );
    expect(curves[0]).toEqual({ id: 7, label: "trial 7 (experiment 2)", steps: [10, 40], values: [1, 0.5] });
    expect(curves[1].steps).toEqual([]);
  });
  it("takes logarithms for the log scale, leaving gaps for values <= 0", () => {
    const c = logCurve({ id: 1, label: "", steps: [1, 2, 3], values: [100, 0, 0.01] });
    expect(c.values[0]).toBeCloseTo(2);
    expect(c.values[1]).toBeNaN();
    expect(c.values[2]).toBeCloseTo(-2);
  });
});

describe("trials side by side", () => {
  it("splits hyperparameters into varying columns and constants", () => {
    const keys = hparamKeys([
      trial(1, { lr: 0.1, opt: { name: "adam" }, seed: 1 }),
      trial(2, { lr: 0.2, opt: { name: "adam" }, seed: 1 }),
      trial(3, { lr: 0.2, opt: { name: "sgd" }, seed: 1 }),
    ]);
    expect(keys.varying).toEqual(["lr", "opt.name"]);
    expect(keys.constant).toEqual({ seed: 1 });
  });
  it("marks rows whose values differ, with missing keys as differences", () => {
    expect(sideBySide([{ a: 1, b: 2 }, { a: 1, b: 3, c: 4 }])).toEqual([
      { key: "a", values: [1, 1], differ: false },
      { key: "b", values: [2, 3], differ: true },
      { key: "c", values: [undefined, 4], differ: true },
    ]);
  });
});

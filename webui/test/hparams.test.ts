import {
  axesOf,
  brushed,
  describeRange,
  goodness,
  heatCells,
  jitter,
  metricColor,
  position,
  valueAt,
  valueOf,
  type Axis,
  type HpTrial,
} from "../src/hparams";

const M = "val_loss";

const trials: HpTrial[] = [
  { id: 1, hparams: { lr: 0.0001, layers: 2, seed: 7, opt: { name: "adam", beta: 0.9 }, bn: true }, metric: 0.5 },
  { id: 2, hparams: { lr: 0.001, layers: 4, seed: 7, opt: { name: "sgd", beta: 0.9 }, bn: false }, metric: 0.3 },
  { id: 3, hparams: { lr: 0.01, layers: 8, seed: 7, opt: { name: "adam", beta: 0.9 }, bn: true }, metric: null },
  { id: 4, hparams: { lr: 0.1, layers: 4, seed: 7, opt: { name: "rmsprop", beta: 0.9 } }, metric: 0.1 },
];

const numberAxis = (min: number, max: number, log = false): Axis => ({
  key: "x",
  kind: "number",
  min,
  max,
  log,
  categories: [],
});
const categoryAxis = (categories: string[]): Axis => ({
  key: "c",
  kind: "category",
  min: 0,
  max: 0,
  log: false,
  categories,
});

describe("axesOf", () => {
  const axes = axesOf(trials, M);
  const byKey = Object.fromEntries(axes.map((a) => [a.key, a]));

  it("skips constant hyperparameters and flattens nested ones, the metric last", () => {
    expect(axes.map((a) => a.key)).toEqual(["bn", "layers", "lr", "opt.name", M]);
    expect(byKey.seed).toBeUndefined();
    expect(byKey["opt.beta"]).toBeUndefined();
  });

  it("detects log scales and ranges", () => {
    expect(byKey.lr).toMatchObject({ kind: "number", min: 0.0001, max: 0.1, log: true });
    expect(byKey.layers).toMatchObject({ kind: "number", min: 2, max: 8, log: false });
  });

  it("makes sorted categories of text and booleans", () => {
    expect(byKey["opt.name"]).toMatchObject({ kind: "category", categories: ["adam", "rmsprop", "sgd"] });
    expect(byKey.bn.categories).toEqual(["false", "true"]);
    const sizes = axesOf(
      [
        { id: 1, hparams: { size: "16" }, metric: 1 },
        { id: 2, hparams: { size: "8" }, metric: 1 },
        { id: 3, hparams: { size: "large" }, metric: 1 },
      ],
      M,
    );
    expect(sizes[0].categories).toEqual(["8", "16", "large"]);
  });

  it("mixes numbers and text into a category axis", () => {
    const [axis] = axesOf(
      [
        { id: 1, hparams: { b: 32 }, metric: 1 },
        { id: 2, hparams: { b: "auto" }, metric: 1 },
      ],
      M,
    );
    expect(axis).toMatchObject({ kind: "category", categories: ["32", "auto"] });
    expect(position(axis, 32)).toBe(0);
  });

  it("leaves trials without a metric off the metric axis's range", () => {
    expect(byKey[M]).toMatchObject({ kind: "number", min: 0.1, max: 0.5, log: false });
    const none = axesOf([{ id: 1, hparams: {}, metric: null }], M);
    expect(none).toEqual([{ key: M, kind: "number", min: 0, max: 0, log: false, categories: [] }]);
  });

  it("reads values, nested and missing", () => {
    expect(valueOf(trials[0], "opt.name", M)).toBe("adam");
    expect(valueOf(trials[0], "bn", M)).toBe("true");
    expect(valueOf(trials[3], "bn", M)).toBeNull();
    expect(valueOf(trials[2], M, M)).toBeNull();
    expect(valueOf(trials[1], M, M)).toBe(0.3);
  });
});

describe("position", () => {
  it("places numbers linearly or logarithmically", () => {
    expect(position(numberAxis(0, 10), 2.5)).toBeCloseTo(0.25);
    expect(position(numberAxis(1e-4, 1e-1, true), 1e-2)).toBeCloseTo(2 / 3);
    expect(position(numberAxis(5, 5), 5)).toBe(0.5);
    expect(valueAt(numberAxis(1e-4, 1e-1, true), 2 / 3)).toBeCloseTo(1e-2);
  });

  it("spaces categories evenly, a single one in the middle", () => {
    const axis = categoryAxis(["a", "b", "c"]);
    expect(["a", "b", "c"].map((c) => position(axis, c))).toEqual([0, 0.5, 1]);
    expect(position(categoryAxis(["only"]), "only")).toBe(0.5);
  });

  it("gives null for missing values", () => {
    expect(position(numberAxis(0, 1), null)).toBeNull();
    expect(position(numberAxis(0, 1), "x")).toBeNull();
    expect(position(categoryAxis(["a"]), "z")).toBeNull();
    expect(position(numberAxis(1, 1000, true), 0)).toBeNull();
  });
});

describe("brushed", () => {
  const axes = axesOf(trials, M);

  it("keeps every trial without brushes and ignores brushes of unknown axes", () => {
    expect([...brushed(trials, axes, {}, M)]).toEqual([1, 2, 3, 4]);
    expect([...brushed(trials, axes, { gone: [0, 0.1] }, M)]).toEqual([1, 2, 3, 4]);
  });

  it("keeps trials inside a range, inclusive of its ends", () => {
    // lr is log: 1e-4, 1e-3, 1e-2, 1e-1 sit at 0, 1/3, 2/3, 1
    expect([...brushed(trials, axes, { lr: [0.3, 2 / 3] }, M)]).toEqual([2, 3]);
    expect([...brushed(trials, axes, { "opt.name": [0, 0] }, M)]).toEqual([1, 3]);
  });

  it("drops trials missing a brushed value", () => {
    expect([...brushed(trials, axes, { [M]: [0, 1] }, M)]).toEqual([1, 2, 4]);
    expect([...brushed(trials, axes, { bn: [0, 1] }, M)]).toEqual([1, 2, 3]);
  });

  it("intersects several brushes", () => {
    // metric 0.1..0.5 linear: 0.3 at 0.5, 0.1 at 0
    const both = brushed(trials, axes, { lr: [0.3, 1], [M]: [0.4, 0.6] }, M);
    expect([...both]).toEqual([2]);
    expect(describeRange(axes[3], [0, 0.5])).toBe("adam, rmsprop");
  });
});

describe("heatCells", () => {
  const grid: HpTrial[] = [
    { id: 1, hparams: { x: 0, opt: "a" }, metric: 1 },
    { id: 2, hparams: { x: 0.5, opt: "a" }, metric: 3 },
    { id: 3, hparams: { x: 0.55, opt: "b" }, metric: 5 },
    { id: 4, hparams: { x: 1, opt: "b" }, metric: 7 },
    { id: 5, hparams: { x: 1, opt: "b" }, metric: 9 },
    { id: 6, hparams: { x: 1, opt: "b" }, metric: null },
    { id: 7, hparams: { opt: "a" }, metric: 2 },
  ];
  const [opt, x] = axesOf(grid, M);

  it("bins numbers into equal slices and categories one each, averaging the metric", () => {
    const { xLabels, yLabels, cells } = heatCells(grid, x, opt, M, 4, true);
    expect(xLabels).toEqual(["0–0.25", "0.25–0.5", "0.5–0.75", "0.75–1"]);
    expect(yLabels).toEqual(["a", "b"]);
    expect(cells).toEqual([
      { x: 0, y: 0, mean: 1, count: 1 },
      { x: 2, y: 0, mean: 3, count: 1 },
      { x: 2, y: 1, mean: 5, count: 1 },
      { x: 3, y: 1, mean: 8, count: 2 },
    ]);
  });

  it("defaults to 10 bins and picks the best cell either way", () => {
    const smaller = heatCells(grid, x, opt, M, undefined, true);
    expect(smaller.xLabels).toHaveLength(10);
    expect(smaller.cells.reduce((n, c) => n + c.count, 0)).toBe(5);
    expect(smaller.best).toMatchObject({ mean: 1 });
    expect(heatCells(grid, x, opt, M, 10, false).best).toMatchObject({ mean: 8 });
    expect([smaller.lo, smaller.hi]).toEqual([1, 8]);
  });

  it("labels number bins with as few digits as keep their edges apart", () => {
    const narrow: HpTrial[] = [0.99, 0.999].map((m, i) => ({ id: i, hparams: { m, o: `${i}` }, metric: 1 }));
    const [m, o] = axesOf(narrow, M);
    const { xLabels } = heatCells(narrow, m, o, M, 10, true);
    expect(xLabels[0]).toBe("0.99–0.9909");
    expect(new Set(xLabels).size).toBe(10);
  });

  it("bins a log axis in log space", () => {
    const logged: HpTrial[] = [1e-4, 1e-3, 1e-2, 1e-1].map((lr, i) => ({
      id: i,
      hparams: { lr, o: i % 2 ? "a" : "b" },
      metric: i,
    }));
    const [lr, o] = axesOf(logged, M);
    expect(lr.log).toBe(true);
    const { cells } = heatCells(logged, lr, o, M, 3, true);
    expect(cells.map((c) => c.x).sort()).toEqual([0, 1, 2, 2]);
  });
});

describe("metric colours", () => {
  it("runs from viridis purple to yellow, clamped", () => {
    expect(metricColor(0)).toBe("#440154");
    expect(metricColor(1)).toBe("#fde725");
    expect(metricColor(0.5)).toBe("#21918c");
    expect(metricColor(-3)).toBe("#440154");
    expect(metricColor(7)).toBe("#fde725");
    expect(metricColor(0.3)).toMatch(/^#[0-9a-f]{6}$/);
  });

  it("puts the better value at the yellow end either way", () => {
    const axis = numberAxis(0.1, 0.5);
    expect(goodness(axis, 0.1, true)).toBe(1);
    expect(goodness(axis, 0.5, true)).toBe(0);
    expect(goodness(axis, 0.5, false)).toBe(1);
    expect(goodness(axis, null, false)).toBeNull();
  });

  it("jitters deterministically within ±0.5", () => {
    for (let id = 0; id < 200; ++id) {
      expect(Math.abs(jitter(id))).toBeLessThanOrEqual(0.5);
      expect(jitter(id)).toBe(jitter(id));
    }
    expect(new Set([1, 2, 3, 4, 5].map(jitter)).size).toBeGreaterThan(1);
  });
});

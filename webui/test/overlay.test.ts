import { colorOf, extent, lastValue, nearestCurve, smooth, ticks, type Curve } from "../src/overlay";

const curve = (id: number, steps: number[], values: number[]): Curve => ({
  id,
  label: `trial ${id}`,
  steps,
  values,
});

describe("overlay", () => {
  it("keeps a constant curve constant under any smoothing", () => {
    for (const w of [0.3, 0.6, 0.9, 0.99]) {
      for (const v of smooth([5, 5, 5, 5, 5], w)) expect(v).toBeCloseTo(5, 12);
    }
  });
  it("debiases the start: the first smoothed value is the first value", () => {
    const out = smooth([10, 0, 0], 0.5);
    expect(out[0]).toBeCloseTo(10, 12);
    // Second: (0.25*10 + 0.5*0) / (1 - 0.25) = 3.333...
    expect(out[1]).toBeCloseTo(10 / 3, 12);
    expect(out[2]).toBeGreaterThan(0);
    expect(out[2]).toBeLessThan(out[1]);
  });
  it("returns a copy at weight 0 and clamps the weight", () => {
    const values = [1, 2, 3];
    const out = smooth(values, 0);
    expect(out).toEqual(values);
    expect(out).not.toBe(values);
    expect(smooth(values, -1)).toEqual(values);
    expect(smooth(values, 5)).toEqual(smooth(values, 0.99));
  });
  it("passes NaN through without poisoning later values", () => {
    const out = smooth([1, NaN, 1, Infinity, 1], 0.8);
    expect(out[1]).toBeNaN();
    expect(out[3]).toBe(Infinity);
    expect(out[0]).toBeCloseTo(1, 12);
    expect(out[2]).toBeCloseTo(1, 12);
    expect(out[4]).toBeCloseTo(1, 12);
    expect(smooth([NaN, 4], 0.9)[1]).toBeCloseTo(4, 12);
  });
  it("measures the extent of finite points and pads flat ranges", () => {
    expect(
      extent([curve(1, [0, 10, 20], [3, NaN, 1]), curve(2, [5, 30, Infinity], [2, -Infinity, 9])]),
    ).toEqual({ x0: 0, x1: 20, y0: 1, y1: 3 });
    const flat = extent([curve(1, [0, 10], [2, 2])]);
    expect(flat.x0).toBe(0);
    expect(flat.x1).toBe(10);
    expect(flat.y0).toBeLessThan(2);
    expect(flat.y1).toBeGreaterThan(2);
    const zero = extent([curve(1, [7], [0])]);
    expect(zero.y0).toBeLessThan(0);
    expect(zero.y1).toBeGreaterThan(0);
    expect(zero.x0).toBeLessThan(7);
    expect(zero.x1).toBeGreaterThan(7);
    expect(extent([])).toEqual({ x0: 0, x1: 1, y0: 0, y1: 1 });
  });
  it("finds the nearest curve by segment distance, within the threshold", () => {
    const curves = [curve(11, [0, 1], [0, 0]), curve(22, [0, 1], [0, 0])];
    const scaled = [
      { x: [0, 100], y: [0, 0] }, // a long horizontal segment: no vertex near x=50
      { x: [0, 100], y: [10, 10] },
    ];
    expect(nearestCurve(curves, scaled, 50, 3, 8)).toBe(11);
    expect(nearestCurve(curves, scaled, 50, 7, 8)).toBe(22);
    expect(nearestCurve(curves, scaled, 50, 30, 8)).toBeNull();
    expect(nearestCurve(curves, scaled, 50, 18, 8)).toBe(22); // exactly 8 away
    expect(nearestCurve(curves, scaled, 150, 0, 8)).toBeNull(); // past the segment's end
    expect(nearestCurve(curves, scaled, 105, 0, 8)).toBe(11); // near its end point
  });
  it("breaks lines at gaps and still finds lone points", () => {
    const curves = [curve(1, [0, 1, 2, 3], [0, 0, 0, 0])];
    const scaled = [{ x: [0, NaN, 50, 100], y: [0, NaN, 0, 0] }];
    expect(nearestCurve(curves, scaled, 25, 0, 5)).toBeNull(); // no segment over the gap
    expect(nearestCurve(curves, scaled, 75, 2, 5)).toBe(1);
    const lone = [{ x: [NaN, 40, NaN], y: [NaN, 40, NaN] }];
    expect(nearestCurve(curves, lone, 43, 44, 5)).toBe(1);
    expect(nearestCurve(curves, lone, 50, 50, 5)).toBeNull();
  });
  it("answers null without curves", () => {
    expect(nearestCurve([], [], 0, 0, 100)).toBeNull();
  });
  it("stays fast for 500 curves of 200 points", () => {
    const curves: Curve[] = [];
    const scaled: { x: number[]; y: number[] }[] = [];
    for (let c = 0; c < 500; ++c) {
      const steps = Array.from({ length: 200 }, (_, i) => i);
      curves.push(curve(c, steps, steps.map((i) => Math.sin(i / 10 + c))));
      scaled.push({ x: steps.map((i) => i * 5), y: steps.map((i) => 200 + 100 * Math.sin(i / 10 + c)) });
    }
    const start = performance.now();
    for (let k = 0; k < 10; ++k) nearestCurve(curves, scaled, 300 + k, 250, 8);
    expect((performance.now() - start) / 10).toBeLessThan(50);
    expect(nearestCurve(curves, scaled, scaled[42].x[100], scaled[42].y[100], 8)).not.toBeNull();
  });
  it("picks colours, round ticks and last values", () => {
    const colours = new Set(Array.from({ length: 10 }, (_, i) => colorOf(i)));
    expect(colours.size).toBe(10);
    expect(colorOf(10)).toBe(colorOf(0));
    expect(colorOf(-1)).toMatch(/^#/);
    expect(ticks(0, 1000, 5)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(ticks(0.13, 0.58, 4)).toEqual([0.2, 0.4]);
    expect(ticks(0.13, 0.58, 8)).toEqual([0.2, 0.3, 0.4, 0.5]);
    expect(ticks(-1, 1, 4)).toEqual([-1, -0.5, 0, 0.5, 1]);
    expect(ticks(1, 1)).toEqual([]);
    expect(lastValue(curve(1, [1, 2, 3], [0.5, 0.4, NaN]))).toEqual({ step: 2, value: 0.4 });
    expect(lastValue(curve(1, [], []))).toBeNull();
  });
});

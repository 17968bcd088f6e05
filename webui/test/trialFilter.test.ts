import { describe, expect, it } from "vitest";
import { filterRows, parseFilter, passes } from "../src/trialFilter";

describe("parseFilter", () => {
  it("reads comparisons, ranges and text", () => {
    expect(parseFilter("  ")).toEqual({ kind: "all" });
    expect(parseFilter("<0.1")).toEqual({ kind: "compare", op: "<", value: 0.1 });
    expect(parseFilter(">= 1e-3")).toEqual({ kind: "compare", op: ">=", value: 0.001 });
    expect(parseFilter("0.5..0.1")).toEqual({ kind: "range", lo: 0.1, hi: 0.5 });
    expect(parseFilter("Adam")).toEqual({ kind: "text", text: "adam" });
    expect(parseFilter("<abc")).toEqual({ kind: "text", text: "<abc" });
  });
});

describe("passes", () => {
  it("compares numbers only", () => {
    expect(passes(parseFilter("<0.1"), 0.05)).toBe(true);
    expect(passes(parseFilter("<0.1"), 0.1)).toBe(false);
    expect(passes(parseFilter("<=0.1"), 0.1)).toBe(true);
    expect(passes(parseFilter("=32"), 32)).toBe(true);
    expect(passes(parseFilter(">1"), "5")).toBe(false);
    expect(passes(parseFilter(">1"), null)).toBe(false);
    expect(passes(parseFilter(">1"), NaN)).toBe(false);
  });
  it("keeps range ends and matches text in part", () => {
    expect(passes(parseFilter("1..2"), 1)).toBe(true);
    expect(passes(parseFilter("1..2"), 2)).toBe(true);
    expect(passes(parseFilter("1..2"), 2.01)).toBe(false);
    expect(passes(parseFilter("ada"), "Adam")).toBe(true);
    expect(passes(parseFilter("sgd"), "Adam")).toBe(false);
    expect(passes(parseFilter("sgd"), undefined)).toBe(false);
  });
});

describe("filterRows", () => {
  const rows = [
    { id: 1, lr: 0.1, opt: "adam" },
    { id: 2, lr: 0.01, opt: "sgd" },
    { id: 3, lr: 0.001, opt: "adam" },
  ];
  const read = (r: (typeof rows)[0], key: string) => r[key as keyof typeof r];
  it("intersects every column's filter and ignores empty ones", () => {
    expect(filterRows(rows, { lr: "", opt: "" }, read)).toBe(rows);
    expect(filterRows(rows, { lr: "<0.05", opt: "adam" }, read).map((r) => r.id)).toEqual([3]);
    expect(filterRows(rows, { lr: "0.005..1" }, read).map((r) => r.id)).toEqual([1, 2]);
  });
});

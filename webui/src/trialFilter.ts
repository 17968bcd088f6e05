// Column filters typed into a trials table: "" (everything), a comparison ("<0.1", ">= 8",
// "=32"), a range ("0.001..0.1", ends included) or text (a category's value or a part of it,
// case-insensitive). A number filter passes only numbers; a row without the value fails every
// filter but the empty one.

export type Filter =
  | { kind: "all" }
  | { kind: "compare"; op: "<" | "<=" | ">" | ">=" | "="; value: number }
  | { kind: "range"; lo: number; hi: number }
  | { kind: "text"; text: string };

const NUMBER = String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?`;
const COMPARE = new RegExp(`^(<=|>=|<|>|=)\\s*(${NUMBER})$`, "i");
const RANGE = new RegExp(`^(${NUMBER})\\s*\\.\\.\\s*(${NUMBER})$`, "i");

export function parseFilter(typed: string): Filter {
  const text = typed.trim();
  if (!text) return { kind: "all" };
  const compare = COMPARE.exec(text);
  if (compare) return { kind: "compare", op: compare[1] as "<", value: Number(compare[2]) };
  const range = RANGE.exec(text);
  if (range) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    return { kind: "range", lo: Math.min(a, b), hi: Math.max(a, b) };
  }
  return { kind: "text", text: text.toLowerCase() };
}

export function passes(filter: Filter, value: unknown): boolean {
  switch (filter.kind) {
    case "all":
      return true;
    case "text":
      return value !== null && value !== undefined && String(value).toLowerCase().includes(filter.text);
    case "range":
      return typeof value === "number" && value >= filter.lo && value <= filter.hi;
    case "compare": {
      if (typeof value !== "number" || Number.isNaN(value)) return false;
      const v = filter.value;
      return filter.op === "<" ? value < v
        : filter.op === "<=" ? value <= v
          : filter.op === ">" ? value > v
            : filter.op === ">=" ? value >= v
              : value === v;
    }
  }
}

// Rows that pass every column's filter; `valueOf(row, key)` reads a column.
export function filterRows<T>(
  rows: T[],
  filters: Record<string, string>,
  valueOf: (row: T, key: string) => unknown,
): T[] {
  const parsed = Object.entries(filters)
    .map(([key, typed]) => [key, parseFilter(typed)] as const)
    .filter(([, f]) => f.kind !== "all");
  if (parsed.length === 0) return rows;
  return rows.filter((row) => parsed.every(([key, f]) => passes(f, valueOf(row, key))));
}

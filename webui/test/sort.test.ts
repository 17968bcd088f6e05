import { splitNdjson } from "../src/api";
import { sortRows } from "../src/sort";

describe("sortRows", () => {
  it("sorts numbers as numbers and text as text, keeping ties in order", () => {
    const rows = [{ n: 10, s: "b" }, { n: 9, s: "a" }, { n: 100, s: "b" }];
    expect(sortRows(rows, (r) => r.n, false).map((r) => r.n)).toEqual([9, 10, 100]);
    expect(sortRows(rows, (r) => r.n, true).map((r) => r.n)).toEqual([100, 10, 9]);
    expect(sortRows(rows, (r) => r.s, false).map((r) => r.n)).toEqual([9, 10, 100]);
  });
});

describe("splitNdjson", () => {
  it("returns whole lines and keeps the unfinished rest for the next chunk", () => {
    const first = splitNdjson(
      '{"result":{"id":"1","log":"a","timestamp":"2026-11-29T01:00:00Z","agentId":"x"}}\n{"result":{"id":"2","lo',
    );
    expect(first.lines.map((l) => l.id)).toEqual([1]);
    expect(first.lines[0].timestamp).toBe(Date.parse("2026-11-29T01:00:00Z") * 1e6);
    expect(first.lines[0].agent).toBe("x");
    const second = splitNdjson(first.rest + 'g":"b","timestamp":""}}\n\n');
    expect(second.lines.map((l) => l.log)).toEqual(["b"]);
    expect(second.rest).toBe("");
  });
  it("throws the master's reason when the stream ends with an error line", () => {
    expect(() => splitNdjson('{"error":{"grpcCode":5,"message":"task trial-1-1 not found"}}\n')).toThrow(
      "task trial-1-1 not found",
    );
  });
});

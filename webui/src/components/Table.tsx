// A table whose columns sort on click (numbers as numbers), with an empty state.

import { useState, type ReactNode } from "react";
import { sortRows } from "../sort";

export interface Column<T> {
  key: string;
  title: string;
  render: (row: T) => ReactNode;
  sortValue?: (row: T) => number | string;
  className?: string;
}

export function Table<T>({ rows, columns, rowKey, empty, testId, rowClass, onRowHover, limit }: {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string | number;
  empty: ReactNode;
  testId?: string;
  rowClass?: (row: T) => string | undefined;
  onRowHover?: (row: T | null) => void; // the pointer entered a row (null: left the table)
  limit?: number; // draw only the first `limit` rows, after sorting
}) {
  const [sort, setSort] = useState<{ key: string; descending: boolean } | null>(null);
  if (rows.length === 0) return <p className="empty">{empty}</p>;
  const column = columns.find((c) => c.key === sort?.key);
  const sorted = column?.sortValue ? sortRows(rows, column.sortValue, sort!.descending) : rows;
  const toggle = (key: string) =>
    setSort((s) => ({ key, descending: s?.key === key ? !s.descending : false }));
  return (
    <div className="table-wrap">
      <table data-testid={testId} onMouseLeave={onRowHover ? () => onRowHover(null) : undefined}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.key}
                className={[c.className, c.sortValue ? "sortable" : ""].join(" ").trim() || undefined}
                onClick={c.sortValue ? () => toggle(c.key) : undefined}
                onKeyDown={
                  c.sortValue
                    ? (e) => (e.key === "Enter" || e.key === " ") && toggle(c.key)
                    : undefined
                }
                tabIndex={c.sortValue ? 0 : undefined}
                aria-sort={
                  sort?.key === c.key ? (sort.descending ? "descending" : "ascending") : undefined
                }
              >
                {c.title}
                {sort?.key === c.key ? (sort.descending ? " ▾" : " ▴") : ""}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(limit === undefined ? sorted : sorted.slice(0, limit)).map((row) => (
            <tr
              key={rowKey(row)}
              className={rowClass?.(row)}
              onMouseEnter={onRowHover ? () => onRowHover(row) : undefined}
            >
              {columns.map((c) => (
                <td key={c.key} className={c.className}>
                  {c.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

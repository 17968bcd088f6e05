// Sorting table rows by a column's value (numbers as numbers, text as text), stably.

export function sortRows<T>(
  rows: T[],
  value: (row: T) => number | string,
  descending: boolean,
): T[] {
  return rows
    .map((row, index) => ({ row, index, key: value(row) }))
    .sort((a, b) => {
      const order = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
      return (descending ? -order : order) || a.index - b.index;
    })
    .map((entry) => entry.row);
}

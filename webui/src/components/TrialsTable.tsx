// An experiment's trials: sortable by every column, filterable by the searcher's metric and by
// each hyperparameter that varies (trialFilter.ts), and cut to the trials the hyperparameter
// brushes select. Rows can be checked for the compare page; the hovered row is the highlighted
// trial everywhere on the page.

import { useMemo, useState } from "react";
import { formatNumber } from "../format";
import { flatten } from "../hparams";
import { compareHref } from "../router";
import { filterRows } from "../trialFilter";
import type { Trial } from "../types";
import { Badge } from "./common";
import { Table, type Column } from "./Table";

// Hyperparameter keys (dotted) whose value differs between trials, and those that do not.
export function hparamKeys(trials: Trial[]): { varying: string[]; constant: Record<string, unknown> } {
  const seen = new Map<string, Set<string>>();
  const first: Record<string, unknown> = {};
  for (const t of trials) {
    for (const [key, value] of Object.entries(flatten(t.hparams))) {
      if (!seen.has(key)) {
        seen.set(key, new Set());
        first[key] = value;
      }
      seen.get(key)!.add(JSON.stringify(value));
    }
  }
  const varying = [...seen].filter(([, values]) => values.size > 1).map(([key]) => key).sort();
  const constant = Object.fromEntries(Object.entries(first).filter(([key]) => !varying.includes(key)));
  return { varying, constant };
}

// Rows drawn at first: a 500-trial search's page stays quick; "show all" draws the rest.
const PAGE_ROWS = 100;

const sortable = (value: unknown): number | string =>
  typeof value === "number" ? value : value === undefined || value === null ? "" : String(value);

export function TrialsTable({ trials, metric, smallerIsBetter, within, highlight, onHover, charted, onChart }: {
  trials: Trial[];
  metric: string;
  smallerIsBetter: boolean;
  within: Set<number> | null; // the brushed trials (null: no brush)
  highlight: number | null;
  onHover: (id: number | null) => void;
  charted: number | null;
  onChart: (id: number) => void;
}) {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [checked, setChecked] = useState<number[]>([]);
  const [rowLimit, setRowLimit] = useState<number>(PAGE_ROWS);
  const { varying, constant } = useMemo(() => hparamKeys(trials), [trials]);
  const metricKey = `metric:${metric}`;
  const valueOf = (t: Trial, key: string) =>
    key === metricKey ? t.best_validation?.[metric] : flatten(t.hparams)[key];
  const shown = filterRows(
    within ? trials.filter((t) => within.has(t.id)) : trials,
    filters,
    valueOf,
  );
  const toggle = (id: number) =>
    setChecked((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id].slice(-10)));
  const worst = smallerIsBetter ? Infinity : -Infinity;
  const columns: Column<Trial>[] = [
    {
      key: "pick",
      title: "",
      render: (t) => (
        <input
          type="checkbox"
          aria-label={`compare trial ${t.id}`}
          checked={checked.includes(t.id)}
          onChange={() => toggle(t.id)}
        />
      ),
    },
    {
      key: "id",
      title: "Trial",
      render: (t) => <a href={`#/trials/${t.id}`}>{t.id}</a>,
      sortValue: (t) => t.id,
    },
    { key: "state", title: "State", render: (t) => <Badge state={t.state} />, sortValue: (t) => t.state },
    { key: "task", title: "Task", render: (t) => t.task_state || "—" },
    { key: "steps", title: "Trained", render: (t) => t.steps_completed, sortValue: (t) => t.steps_completed },
    {
      key: "best",
      title: `Best ${metric}`,
      render: (t) => formatNumber(t.best_validation?.[metric]),
      sortValue: (t) => Number(t.best_validation?.[metric] ?? worst),
    },
    ...varying.map(
      (key): Column<Trial> => ({
        key: `hp:${key}`,
        title: key,
        render: (t) => {
          const v = flatten(t.hparams)[key];
          return typeof v === "number" ? formatNumber(v) : v === undefined ? "—" : String(v);
        },
        sortValue: (t) => sortable(flatten(t.hparams)[key]),
      }),
    ),
    { key: "restarts", title: "Restarts", render: (t) => t.restarts, sortValue: (t) => t.restarts },
    {
      key: "chart",
      title: "",
      render: (t) => (
        <button className="link" onClick={() => onChart(t.id)} disabled={t.id === charted}>
          {t.id === charted ? "charted" : "chart"}
        </button>
      ),
    },
  ];
  const filterable = [{ key: metricKey, label: `best ${metric}` }, ...varying.map((k) => ({ key: k, label: k }))];
  return (
    <>
      <div className="filters trial-filters" role="search">
        {filterable.map((f) => (
          <label key={f.key}>
            {f.label}{" "}
            <input
              name={`filter-${f.key}`}
              placeholder="<0.1, 1..5, text"
              size={10}
              value={filters[f.key] ?? ""}
              onChange={(e) => setFilters((all) => ({ ...all, [f.key]: e.target.value }))}
            />
          </label>
        ))}
        <a
          className={checked.length >= 2 ? "button" : "button disabled"}
          aria-disabled={checked.length < 2}
          href={checked.length >= 2 ? compareHref(checked) : undefined}
          data-testid="compare-link"
        >
          Compare {checked.length} checked
        </a>
      </div>
      <p className="muted" data-testid="trials-shown">
        {shown.length} of {trials.length} trials shown
        {within ? " (brushed in the parallel coordinates)" : ""}
        {Object.keys(constant).length
          ? ` · the same for every trial: ${Object.entries(constant)
              .map(([k, v]) => `${k}=${typeof v === "number" ? formatNumber(v) : JSON.stringify(v)}`)
              .join(", ")}`
          : ""}
      </p>
      <Table
        testId="trials"
        rows={shown}
        limit={rowLimit}
        rowKey={(t) => t.id}
        empty={trials.length ? "No trial matches the filters." : "No trials yet."}
        columns={columns}
        rowClass={(t) => (t.id === highlight ? "highlight" : undefined)}
        onRowHover={(t) => onHover(t ? t.id : null)}
      />
      {shown.length > rowLimit ? (
        <button className="link" onClick={() => setRowLimit(Infinity)}>
          Show all {shown.length} trials ({shown.length - rowLimit} more)
        </button>
      ) : null}
    </>
  );
}

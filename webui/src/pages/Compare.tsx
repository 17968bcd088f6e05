// Trials side by side, from any experiments (2 to 10; the address holds them, so a link shares
// the view): their curves of a chosen metric overlaid, their hyperparameters (rows that differ
// marked) and their best validation values. Read with Determined's CompareTrials
// (GET /api/v1/trials/time-series); trials are added by id and removed here.

import { useMemo, useState, type FormEvent } from "react";
import { CurvesPanel } from "../components/CurvesPanel";
import { Badge, Empty, ErrorBox, Pending, Section, Stale } from "../components/common";
import {
  choicesOf,
  curvesOfTimeSeries,
  type MetricChoice,
  type SeriesAnswer,
  type TimeSeriesAnswer,
} from "../curves";
import { trialView } from "../determined";
import { formatNumber } from "../format";
import { flatten } from "../hparams";
import { usePoll } from "../hooks";
import { compareHref } from "../router";
import type { Trial } from "../types";

export const MAX_COMPARED = 10;

function go(trials: number[]) {
  window.location.hash = compareHref(trials);
}

// Rows of a side-by-side table: each key with every trial's value, and whether they differ.
export function sideBySide(records: Record<string, unknown>[]): { key: string; values: unknown[]; differ: boolean }[] {
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))].sort();
  return keys.map((key) => {
    const values = records.map((r) => r[key]);
    const differ = new Set(values.map((v) => JSON.stringify(v ?? null))).size > 1;
    return { key, values, differ };
  });
}

const show = (v: unknown) =>
  typeof v === "number" ? formatNumber(v) : v === undefined || v === null ? "—" : typeof v === "string" ? v : JSON.stringify(v);

function SideBySide({ trials, rows, testId }: {
  trials: Trial[];
  rows: { key: string; values: unknown[]; differ: boolean }[];
  testId: string;
}) {
  if (rows.length === 0) return <Empty>Nothing to show.</Empty>;
  return (
    <div className="table-wrap">
      <table data-testid={testId}>
        <thead>
          <tr>
            <th />
            {trials.map((t) => (
              <th key={t.id}>trial {t.id}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key} className={row.differ ? "differ" : undefined}>
              <th scope="row">{row.key}</th>
              {row.values.map((v, i) => (
                <td key={trials[i].id}>{show(v)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AddTrial({ trials }: { trials: number[] }) {
  const [typed, setTyped] = useState("");
  const add = (event: FormEvent) => {
    event.preventDefault();
    const id = Number(typed);
    if (Number.isInteger(id) && id > 0 && !trials.includes(id)) go([...trials, id].slice(0, MAX_COMPARED));
    setTyped("");
  };
  return (
    <form className="filters" onSubmit={add}>
      <label>
        Add a trial by id{" "}
        <input name="add-trial" inputMode="numeric" size={8} value={typed} onChange={(e) => setTyped(e.target.value)} />
      </label>
      <button type="submit" disabled={trials.length >= MAX_COMPARED}>
        Add
      </button>
    </form>
  );
}

export function Compare({ trials: ids }: { trials: number[] }) {
  const [choice, setChoice] = useState<MetricChoice | null>(null);
  const [highlight, setHighlight] = useState<number | null>(null);
  const listed = ids.slice(0, MAX_COMPARED);
  const chosen = choice ?? { group: "validation", name: "" };
  const path = listed.length
    ? `/api/v1/trials/time-series?${listed.map((id) => `trialIds=${id}`).join("&")}` +
      `&group=${encodeURIComponent(chosen.group)}&metricNames=${encodeURIComponent(chosen.name)}` +
      `&maxDatapoints=500`
    : null;
  const answer = usePoll<TimeSeriesAnswer>(path, 10_000);
  const trials = useMemo(() => answer.data?.trials.map((t) => trialView(t.trial)) ?? [], [answer.data]);
  // Metric choices: every validation metric any trial has a best value of, and the metrics the
  // first trial's experiment offers (training ones too).
  const firstExperiment = trials[0]?.experiment_id;
  const offered = usePoll<SeriesAnswer>(
    firstExperiment ? `/api/v1/experiments/${firstExperiment}/metrics-series` : null,
    60_000,
  );
  const validationNames = useMemo(
    () => [...new Set(trials.flatMap((t) => Object.keys(t.best_validation ?? {})))],
    [trials],
  );
  const names = useMemo(() => {
    const all: Record<string, string[]> = { ...(offered.data?.names ?? {}) };
    all.validation = [...new Set([...(all.validation ?? []), ...validationNames])];
    return all;
  }, [offered.data, validationNames]);
  if (choice === null && validationNames.length > 0) {
    setChoice({ group: "validation", name: validationNames.includes("validation_loss") ? "validation_loss" : validationNames[0] });
  }
  const curves = useMemo(
    () => (answer.data && chosen.name ? curvesOfTimeSeries(answer.data, chosen.name) : []),
    [answer.data, chosen.name],
  );
  const hparamRows = useMemo(() => sideBySide(trials.map((t) => flatten(t.hparams))), [trials]);
  const bestRows = useMemo(() => sideBySide(trials.map((t) => t.best_validation ?? {})), [trials]);
  return (
    <>
      <h1>Compare trials</h1>
      {listed.length < 2 ? (
        <Empty>
          Check two to ten trials in an experiment's table and choose Compare, or add trials by id
          here.
        </Empty>
      ) : null}
      <AddTrial trials={listed} />
      <div className="summary" data-testid="compared">
        {listed.map((id) => {
          const t = trials.find((x) => x.id === id);
          return (
            <span key={id} className="chip">
              <a href={`#/trials/${id}`}>trial {id}</a>
              {t ? (
                <>
                  {" "}of <a href={`#/experiments/${t.experiment_id}`}>experiment {t.experiment_id}</a>{" "}
                  <Badge state={t.state} />
                </>
              ) : null}{" "}
              <button className="link" aria-label={`remove trial ${id}`} onClick={() => go(listed.filter((x) => x !== id))}>
                ✕
              </button>
            </span>
          );
        })}
      </div>
      {path === null ? null : answer.error && (!answer.data || answer.dataPath !== path) ? (
        <ErrorBox error={`Cannot compare these trials: ${answer.error}`} />
      ) : !answer.data ? (
        <Pending {...answer} />
      ) : (
        <>
          <Stale error={answer.error} updatedAt={answer.updatedAt} />
          <Section title="Learning curves">
            <CurvesPanel
              trials={trials.length}
              loading={answer.dataPath !== path}
              choices={choicesOf(names, "validation_loss")}
              choice={chosen}
              onChoice={setChoice}
              curves={curves}
              highlight={highlight}
              onHover={setHighlight}
              empty="None of these trials reported this metric."
            />
          </Section>
          <Section title="Hyperparameters">
            <SideBySide trials={trials} rows={hparamRows} testId="compare-hparams" />
          </Section>
          <Section title="Best validation values">
            <SideBySide trials={trials} rows={bestRows} testId="compare-best" />
          </Section>
        </>
      )}
    </>
  );
}

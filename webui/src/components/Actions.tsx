// Pause, activate, cancel and kill an experiment (the master says whether the caller may).

import { useState } from "react";
import { post } from "../api";

const TERMINAL = ["COMPLETED", "CANCELED", "ERROR", "DELETING", "DELETE_FAILED"];

export function ExperimentActions({ id, state, onDone }: {
  id: number;
  state: string;
  onDone: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  if (TERMINAL.includes(state)) return null;
  const act = async (action: string) => {
    if ((action === "kill" || action === "cancel") && !window.confirm(`${action} experiment ${id}?`)) {
      return;
    }
    setBusy(true);
    setError("");
    try {
      await post(`/api/v1/experiments/${id}/${action}`);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const button = (action: string, label: string, enabled: boolean) => (
    <button key={action} disabled={busy || !enabled} onClick={() => void act(action)}>
      {label}
    </button>
  );
  return (
    <span className="actions">
      {button("pause", "Pause", state === "ACTIVE")}
      {button("activate", "Activate", state === "PAUSED")}
      {button("cancel", "Cancel", !state.startsWith("STOPPING"))}
      {button("kill", "Kill", true)}
      {error ? <span className="error">{error}</span> : null}
    </span>
  );
}

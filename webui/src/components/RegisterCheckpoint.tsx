// Registers one checkpoint in the model registry as a new version of the model picked
// (Determined's POST /api/v1/models/{name}/versions), then links the version's model.

import { useState } from "react";
import { post } from "../api";
import { modelHref } from "../determined";

export function RegisterCheckpoint({ uuid, models }: { uuid: string; models: string[] }) {
  const [model, setModel] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [registered, setRegistered] = useState<{ model: string; version: number } | null>(null);
  if (registered) {
    return (
      <span data-testid="registered">
        version {registered.version} of <a href={modelHref(registered.model)}>{registered.model}</a>
      </span>
    );
  }
  if (models.length === 0) {
    return (
      <span className="muted">
        <a href="#/models">create a model</a> to register it
      </span>
    );
  }
  const register = async () => {
    setBusy(true);
    setError("");
    try {
      const reply = await post<{ modelVersion: { version: number } }>(
        `/api/v1/models/${encodeURIComponent(model)}/versions`,
        { checkpointUuid: uuid },
      );
      setRegistered({ model, version: reply.modelVersion.version });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="actions">
      <select name="register-model" value={model} onChange={(e) => setModel(e.target.value)}>
        <option value="">model…</option>
        {models.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <button disabled={busy || !model} onClick={() => void register()}>
        Register
      </button>
      {error ? <span className="error">{error}</span> : null}
    </span>
  );
}

// The model registry: every model (name, versions, labels, owner, last change), and a form that
// creates one. A model's page lists its versions; a trial's page registers its checkpoints.

import { useState, type FormEvent } from "react";
import { post } from "../api";
import { Badge, ErrorBox, Pending, Stale } from "../components/common";
import { Table } from "../components/Table";
import { modelHref, timeNs, type ApiModel } from "../determined";
import { formatTime } from "../format";
import { usePoll } from "../hooks";

// Models shown at most (the newest changed first); the rest are a search away.
const SHOWN = 500;

function CreateModel({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await post("/api/v1/models", { name: name.trim(), description });
      setName("");
      setDescription("");
      onCreated();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="filters" onSubmit={(e) => void submit(e)} data-testid="create-model">
      <input name="model-name" placeholder="new model's name" value={name} onChange={(e) => setName(e.target.value)} />
      <input
        name="model-description"
        placeholder="description"
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
      <button type="submit" disabled={busy || !name.trim()}>
        Create model
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}

export function Models() {
  const [name, setName] = useState("");
  const path =
    `/api/v1/models?sortBy=SORT_BY_LAST_UPDATED_TIME&orderBy=ORDER_BY_DESC&limit=${SHOWN}` +
    (name ? `&name=${encodeURIComponent(name)}` : "");
  const models = usePoll<{ models: ApiModel[]; pagination: { total: number } }>(path, 5000);
  return (
    <>
      <h1>Models</h1>
      <Stale error={models.error} updatedAt={models.updatedAt} />
      <CreateModel onCreated={models.refresh} />
      <div className="filters">
        <input name="name" placeholder="name contains" value={name} onChange={(e) => setName(e.target.value)} />
        {models.data ? (
          <span className="muted">
            {models.data.models.length} of {models.data.pagination.total} models
          </span>
        ) : null}
      </div>
      {models.data ? (
        <Table
          testId="models"
          rows={models.data.models}
          rowKey={(m) => m.id}
          empty={name ? "No model matches." : "No models yet: create one, then register a checkpoint from a trial's page."}
          columns={[
            { key: "name", title: "Name", render: (m) => <a href={modelHref(m.name)}>{m.name}</a>, sortValue: (m) => m.name },
            { key: "versions", title: "Versions", render: (m) => m.numVersions, sortValue: (m) => m.numVersions },
            { key: "description", title: "Description", render: (m) => m.description || "—" },
            { key: "labels", title: "Labels", render: (m) => (m.labels ?? []).join(", ") || "—" },
            { key: "owner", title: "Owner", render: (m) => m.username || "—" },
            {
              key: "updated",
              title: "Last change",
              render: (m) => formatTime(timeNs(m.lastUpdatedTime ?? m.creationTime)),
              sortValue: (m) => timeNs(m.lastUpdatedTime ?? m.creationTime),
            },
            { key: "archived", title: "", render: (m) => (m.archived ? <Badge state="ARCHIVED" /> : null) },
          ]}
        />
      ) : (
        <Pending {...models} />
      )}
    </>
  );
}

// One model of the registry: its description and labels, and its versions, newest first, each
// with the checkpoint it registers (linked to the trial that wrote it).

import { Pending, Stale } from "../components/common";
import { Table } from "../components/Table";
import { timeNs, type ApiModel, type ApiModelVersion } from "../determined";
import { formatTime } from "../format";
import { usePoll } from "../hooks";

export function ModelDetail({ name }: { name: string }) {
  const versions = usePoll<{ model: ApiModel; modelVersions: ApiModelVersion[] }>(
    `/api/v1/models/${encodeURIComponent(name)}/versions?orderBy=ORDER_BY_DESC`,
    5000,
  );
  if (!versions.data) return <Pending {...versions} />;
  const { model, modelVersions } = versions.data;
  return (
    <>
      <h1>
        Model {model.name} <small className="muted">{model.description}</small>
      </h1>
      <Stale error={versions.error} updatedAt={versions.updatedAt} />
      <div className="summary">
        <span>
          {model.numVersions} version{model.numVersions === 1 ? "" : "s"}
        </span>
        <span>owner {model.username || "—"}</span>
        <span>labels {(model.labels ?? []).join(", ") || "—"}</span>
        <span>created {formatTime(timeNs(model.creationTime))}</span>
        {model.archived ? <span>archived: takes no new versions</span> : null}
      </div>
      <Table
        testId="model-versions"
        rows={modelVersions}
        rowKey={(v) => v.version}
        empty="No versions yet: register a checkpoint from a trial's page."
        columns={[
          { key: "version", title: "Version", render: (v) => v.version, sortValue: (v) => v.version },
          { key: "name", title: "Name", render: (v) => v.name || "—" },
          {
            key: "checkpoint",
            title: "Checkpoint",
            render: (v) => <code>{v.checkpoint?.uuid ?? "—"}</code>,
          },
          {
            key: "trial",
            title: "Trial",
            render: (v) => {
              const trial = v.checkpoint?.training?.trialId;
              return trial ? <a href={`#/trials/${trial}`}>{trial}</a> : "—";
            },
          },
          { key: "comment", title: "Comment", render: (v) => v.comment || "—" },
          { key: "owner", title: "By", render: (v) => v.username || "—" },
          {
            key: "created",
            title: "Registered",
            render: (v) => formatTime(timeNs(v.creationTime)),
            sortValue: (v) => timeNs(v.creationTime),
          },
        ]}
      />
    </>
  );
}

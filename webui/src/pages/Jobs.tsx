// The job queue: unfinished jobs in scheduling order.

import { Badge, Pending, Stale } from "../components/common";
import { Table } from "../components/Table";
import { formatTime } from "../format";
import { usePoll } from "../hooks";
import { jobView, type ApiJob } from "../determined";
import type { Job } from "../types";

// A trial's job is its experiment's ("experiment-3"); other jobs show their name, shortened.
function JobName({ job }: { job: Job }) {
  const experiment = /^experiment-(\d+)$/.exec(job.job_id)?.[1];
  if (experiment) return <a href={`#/experiments/${experiment}`}>Experiment {experiment}</a>;
  const name = job.name || job.job_id;
  const line = name.split("\n")[0];
  return <span title={name}>{line.length > 60 ? `${line.slice(0, 57)}…` : line}</span>;
}

export function Jobs() {
  const jobs = usePoll<{ jobs: ApiJob[] }>("/api/v1/job-queues");
  return (
    <>
      <h1>Job queue</h1>
      <Stale error={jobs.error} updatedAt={jobs.updatedAt} />
      {jobs.data ? (
        <Table
          testId="jobs"
          rows={jobs.data.jobs.map(jobView)}
          rowKey={(j) => j.job_id}
          empty="The queue is empty: nothing runs or waits."
          columns={[
            { key: "ahead", title: "#", render: (j) => j.jobs_ahead + 1, sortValue: (j) => j.jobs_ahead },
            { key: "name", title: "Job", render: (j) => <JobName job={j} /> },
            { key: "type", title: "Type", render: (j) => j.type },
            { key: "state", title: "State", render: (j) => <Badge state={j.state} /> },
            { key: "pool", title: "Pool", render: (j) => j.resource_pool },
            { key: "slots", title: "Slots", render: (j) => `${j.allocated_slots} / ${j.requested_slots}` },
            { key: "priority", title: "Priority", render: (j) => j.priority, sortValue: (j) => j.priority },
            { key: "weight", title: "Weight", render: (j) => j.weight },
            { key: "submitted", title: "Submitted", render: (j) => formatTime(j.submitted_at), sortValue: (j) => j.submitted_at },
          ]}
        />
      ) : (
        <Pending {...jobs} />
      )}
    </>
  );
}

// Small pieces every page uses: state badges, loading/error/empty states, progress bars.

import type { ReactNode } from "react";
import { stateTone } from "../format";

export function Badge({ state }: { state: string }) {
  return <span className={`badge ${stateTone(state)}`}>{state || "—"}</span>;
}

export function Loading() {
  return <p className="muted">Loading…</p>;
}

export function ErrorBox({ error }: { error: string }) {
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Progress({ value }: { value: number }) {
  const percent = Math.round(Math.min(1, Math.max(0, value)) * 100);
  return (
    <span className="progress" title={`${percent}%`}>
      <span style={{ width: `${percent}%` }} />
    </span>
  );
}

export function Section({ title, children, actions }: {
  title: string;
  children: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <section>
      <header className="section-header">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

// What a polled request shows before it has data: loading, or the error.
export function Pending({ loading, error }: { loading: boolean; error: string | null }) {
  if (error) return <ErrorBox error={error} />;
  return loading ? <Loading /> : null;
}

// Shown while the latest poll of data already on the page failed: the page is out of date.
export function Stale({ error, updatedAt }: { error: string | null; updatedAt: number | null }) {
  if (!error || updatedAt === null) return null;
  return (
    <p className="stale" role="status">
      Cannot reach the master ({error}); showing what it said at{" "}
      {new Date(updatedAt).toLocaleTimeString()}.
    </p>
  );
}

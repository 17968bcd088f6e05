// The frame of every page: the navigation, who is logged in, the page's title.

import type { ReactNode } from "react";
import { logout, session } from "../api";
import type { Route } from "../router";

const LINKS: { href: string; label: string; pages: Route["page"][] }[] = [
  { href: "#/cluster", label: "Cluster", pages: ["cluster"] },
  { href: "#/experiments", label: "Experiments", pages: ["experiments", "experiment", "trial", "compare"] },
  { href: "#/models", label: "Models", pages: ["models", "model"] },
  { href: "#/jobs", label: "Job queue", pages: ["jobs"] },
  { href: "#/autoscaling", label: "Autoscaling", pages: ["autoscaling"] },
];

export function Layout({ route, children }: { route: Route; children: ReactNode }) {
  const user = session()?.user ?? "";
  return (
    <div className="app">
      <nav className="nav">
        <span className="brand">det</span>
        {LINKS.map((link) => (
          <a
            key={link.href}
            href={link.href}
            className={link.pages.includes(route.page) ? "active" : undefined}
          >
            {link.label}
          </a>
        ))}
        <span className="spacer" />
        <span className="user" data-testid="user">
          {user}
        </span>
        <button className="link" onClick={() => void logout()}>
          Log out
        </button>
      </nav>
      <main>{children}</main>
    </div>
  );
}

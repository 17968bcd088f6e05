// Hash routes (#/experiments/3), so the master serves one index.html for every page.

import { useEffect, useState } from "react";

export type Route =
  | { page: "cluster" }
  | { page: "experiments" }
  | { page: "experiment"; id: number }
  | { page: "trial"; id: number }
  | { page: "compare"; trials: number[] }
  | { page: "jobs" }
  | { page: "autoscaling" }
  | { page: "models" }
  | { page: "model"; name: string };

// The compare page's address: its trials in the order chosen (shareable).
export function compareHref(trials: number[]): string {
  return `#/compare?trials=${trials.join(",")}`;
}

function trialsOf(query: string): number[] {
  const listed = new URLSearchParams(query).get("trials") ?? "";
  const ids = listed.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
  return [...new Set(ids)];
}

// A path part as typed or linked; one that is not valid percent-encoding is taken as it is.
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function parseRoute(hash: string): Route {
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const parts = path.split("/").filter(Boolean);
  const id = Number(parts[1]);
  switch (parts[0]) {
    case "experiments":
      return parts[1] && Number.isInteger(id) ? { page: "experiment", id } : { page: "experiments" };
    case "trials":
      return Number.isInteger(id) && parts[1] ? { page: "trial", id } : { page: "experiments" };
    case "compare":
      return { page: "compare", trials: trialsOf(query) };
    case "jobs":
      return { page: "jobs" };
    case "autoscaling":
      return { page: "autoscaling" };
    case "models":
      // A model by its name (or id), as Determined's /api/v1/models/{name} takes it.
      return parts[1] ? { page: "model", name: decoded(parts[1]) } : { page: "models" };
    default:
      return { page: "cluster" };
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}

import { useEffect, useState } from "react";
import { session, whenSignedOut } from "./api";
import { Layout } from "./components/Layout";
import { Autoscaling } from "./pages/Autoscaling";
import { Cluster } from "./pages/Cluster";
import { Compare } from "./pages/Compare";
import { ExperimentDetail } from "./pages/ExperimentDetail";
import { Experiments } from "./pages/Experiments";
import { Jobs } from "./pages/Jobs";
import { Login } from "./pages/Login";
import { ModelDetail } from "./pages/ModelDetail";
import { Models } from "./pages/Models";
import { TrialDetail } from "./pages/TrialDetail";
import { useRoute, type Route } from "./router";

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "experiments":
      return <Experiments />;
    case "experiment":
      return <ExperimentDetail id={route.id} key={route.id} />;
    case "trial":
      return <TrialDetail id={route.id} key={route.id} />;
    case "compare":
      return <Compare trials={route.trials} />;
    case "jobs":
      return <Jobs />;
    case "autoscaling":
      return <Autoscaling />;
    case "models":
      return <Models />;
    case "model":
      return <ModelDetail name={route.name} key={route.name} />;
    default:
      return <Cluster />;
  }
}

export function App() {
  const route = useRoute();
  const [signedIn, setSignedIn] = useState(session() !== null);
  useEffect(() => whenSignedOut(() => setSignedIn(false)), []);
  if (!signedIn) return <Login onLoggedIn={() => setSignedIn(true)} />;
  return (
    <Layout route={route}>
      <Page route={route} />
    </Layout>
  );
}

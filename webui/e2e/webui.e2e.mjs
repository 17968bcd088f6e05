// The WebUI end to end: Playwright (playwright-core) drives Debian's Chromium, headless, against
// a real cluster that scripts/webui-e2e.sh started (det deploy local: master, autoscaler with
// the local provider, no agent yet). It logs in, submits an experiment with the real det CLI,
// sees the autoscaler's agent and instance, watches the learning curve gain points, pauses and
// activates the experiment, reads the trial's logs, and writes a screenshot of every page.
//
// Environment: DET_WEBUI_URL, DET_ADMIN_PASSWORD, DET_CLI (the det binary, its DET_* settings
// exported), DET_EXPERIMENT_CONFIG, DET_MODEL_DIR, DET_SCREENSHOTS, CHROMIUM (default
// /usr/bin/chromium); DET_TUTORIAL_DIR (Determined's Core API tutorials, when the library is
// there: one of them runs unmodified and its page is checked).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const url = process.env.DET_WEBUI_URL ?? "http://127.0.0.1:8080/";
const shots = process.env.DET_SCREENSHOTS ?? "webui-screenshots";
mkdirSync(shots, { recursive: true });
for (const old of readdirSync(shots)) rmSync(join(shots, old));  // this run's pictures only

function det(...args) {
  return execFileSync(process.env.DET_CLI, args, { encoding: "utf8" });
}

async function step(name, action) {
  const started = Date.now();
  await action();
  console.log(`ok ${name} (${Date.now() - started} ms)`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],  // and a fresh profile of its own, which Playwright makes
});
console.log(`chromium ${browser.version()}`);
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(30_000);
// Nothing may come from anywhere but the master, and the page must not throw.
const origin = new URL(url).host;
const problems = [];
await page.route("**/*", (route) =>
  new URL(route.request().url()).host === origin ? route.continue() : (problems.push(`fetched ${route.request().url()}`), route.abort()),
);
page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
page.on("console", (message) => {
  // A refused login answers 401, which the browser logs as a failed resource.
  if (message.type() === "error" && !message.text().includes("401")) {
    problems.push(`console error: ${message.text()}`);
  }
});
page.on("dialog", (dialog) => dialog.accept());  // "kill experiment N?"
const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
let failed = false;
try {
  await step("the login page shows, and a wrong password is refused", async () => {
    await page.goto(url);
    await page.getByRole("button", { name: "Log in" }).waitFor();
    await shot("01-login");
    await page.fill("input[name=username]", "admin");
    await page.fill("input[name=password]", "not-the-password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("alert").filter({ hasText: "invalid username or password" }).waitFor();
  });
  await step("an admin logs in and sees the cluster, with no agent yet", async () => {
    await page.fill("input[name=password]", process.env.DET_ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByTestId("user").filter({ hasText: "admin" }).waitFor();
    await page.getByText("No agents are connected").waitFor();
    await shot("02-cluster-empty");
  });
  let id = 0;
  await step("an experiment submitted with det appears in the list", async () => {
    const out = det("--json", "experiment", "create", process.env.DET_EXPERIMENT_CONFIG,
                    process.env.DET_MODEL_DIR);
    id = JSON.parse(out).id;
    await page.click("text=Experiments");
    await page.getByTestId("experiments").locator(`a[href="#/experiments/${id}"]`).first().waitFor();
    await shot("03-experiments");
  });
  await step("the autoscaler's agent shows on the cluster page", async () => {
    await page.click("text=Cluster");
    await page.getByTestId("agents").locator("td", { hasText: "local-default-" }).first().waitFor();
    await page.getByTestId("slots-cpu").waitFor();
    await shot("04-cluster");
  });
  await step("the experiment's learning curve gains points", async () => {
    await page.goto(`${url}#/experiments/${id}`);
    const chart = page.getByTestId("learning-curve");
    await page.waitForFunction(
      () => Number(document.querySelector("[data-testid=learning-curve]")?.dataset.points) > 0,
    );
    const first = Number(await chart.getAttribute("data-points"));
    await page.waitForFunction(
      (seen) => Number(document.querySelector("[data-testid=learning-curve]")?.dataset.points) > seen,
      first,
    );
    await page.locator(".u-over").waitFor();  // uPlot drew the chart
    await shot("05-experiment");
  });
  await step("pause from the experiment page: the run checkpoints and stops", async () => {
    await page.getByRole("button", { name: "Pause" }).click();
    await page.locator(".summary .badge", { hasText: "PAUSED" }).waitFor();
    // The trial's task ends (its row's Task column empties) before it is activated again.
    await page.getByTestId("trials").locator("tbody tr td:nth-child(3)", { hasText: "—" }).waitFor();
    await shot("06-experiment-paused");
  });
  await step("activate: the trial resumes from its checkpoint, its new run's logs followed", async () => {
    await page.getByTestId("trials").locator("a").first().click();
    await page.getByTestId("logs").filter({ hasText: "run 1: starting at step 0" }).waitFor();
    await page.goto(`${url}#/experiments/${id}`);
    await page.getByRole("button", { name: "Activate" }).click();
    await page.locator(".summary .badge", { hasText: "ACTIVE" }).waitFor();
    await page.getByTestId("trials").locator("a").first().click();
    // Run 2's first line arrives while the page follows its log; it starts past step 0.
    await page.getByTestId("logs").filter({ hasText: /run 2: starting at step [1-9]/ }).waitFor({
      timeout: 60_000,
    });
    await shot("07-trial");
  });
  await step("the autoscaling page shows the instance and why it was launched", async () => {
    await page.click("text=Autoscaling");
    await page.getByTestId("instances").locator("td", { hasText: "local-default-" }).first().waitFor();
    await page.getByTestId("decisions").getByText("pending slots need").first().waitFor();
    await shot("08-autoscaling");
  });
  await step("the job queue shows the experiment's job", async () => {
    await page.click("text=Job queue");
    await page.getByTestId("jobs").getByRole("link", { name: `Experiment ${id}` }).waitFor();
    await shot("09-jobs");
  });
  await step("a second experiment is killed from its page", async () => {
    const other = JSON.parse(det("--json", "experiment", "create", process.env.DET_EXPERIMENT_CONFIG,
                                 process.env.DET_MODEL_DIR)).id;
    await page.goto(`${url}#/experiments/${other}`);
    await page.getByRole("button", { name: "Kill" }).click();
    await page.locator(".summary .badge", { hasText: "CANCELED" }).waitFor({ timeout: 60_000 });
  });
  await step("the list filters by state and by name", async () => {
    await page.goto(`${url}#/experiments`);
    await page.selectOption("select[name=state]", "CANCELED");
    await page.getByTestId("experiments").getByText("CANCELED").first().waitFor();
    await page.fill("input[name=name]", "no-such-experiment");
    await page.getByText("No experiment matches.").waitFor();
    await page.selectOption("select[name=state]", "");
    await page.fill("input[name=name]", "");
  });
  await step("the experiment completes, and pages read at a tablet's width", async () => {
    await page.goto(`${url}#/experiments/${id}`);
    await page.locator(".summary .badge", { hasText: "COMPLETED" }).waitFor({ timeout: 150_000 });
    await page.getByTestId("best-metric").filter({ hasText: "trial" }).waitFor();
    await page.setViewportSize({ width: 768, height: 1024 });
    for (const route of ["#/cluster", `#/experiments/${id}`, "#/autoscaling"]) {
      await page.goto(`${url}${route}`);
      await page.locator("main h1").waitFor();
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - window.innerWidth,
      );
      if (overflow > 0) throw new Error(`${route} is ${overflow} px wider than a 768 px window`);
    }
    await page.goto(`${url}#/experiments/${id}`);
    await page.locator(".summary .badge", { hasText: "COMPLETED" }).waitFor();
    await shot("10-experiment-completed-768");
  });
  if (process.env.DET_TUTORIAL_DIR) {
    await step("a Determined Core API tutorial, unmodified, completes with its metrics shown", async () => {
      const dir = process.env.DET_TUTORIAL_DIR;
      const tutorial = JSON.parse(det("--json", "experiment", "create", join(dir, "1_metrics.yaml"), dir)).id;
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${url}#/experiments/${tutorial}`);
      await page.locator(".summary .badge", { hasText: "COMPLETED" }).waitFor({ timeout: 150_000 });
      await page.waitForFunction(
        () => Number(document.querySelector("[data-testid=learning-curve]")?.dataset.points) > 0,
      );
      await page.getByTestId("best-metric").filter({ hasText: "trial" }).waitFor();
      await shot("11-determined-tutorial");
    });
  }
  await step("log out returns to the login page", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
  });
  if (problems.length) throw new Error(problems.join("; "));
} catch (error) {
  failed = true;
  console.error(`FAIL: ${error.message}`);
  await shot("failure").catch(() => {});
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

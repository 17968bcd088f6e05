// The WebUI end to end: Playwright (playwright-core) drives Debian's Chromium, headless, against
// a real cluster that scripts/webui-e2e.sh started (det deploy local: master, autoscaler with
// the local provider, no agent yet). It logs in, submits an experiment with the real det CLI,
// sees the autoscaler's agent and instance, watches the learning curve gain points, pauses and
// activates the experiment, reads the trial's logs, and writes a screenshot of every page.
//
// Environment: DET_WEBUI_URL, DET_ADMIN_PASSWORD, DET_CLI (the det binary, its DET_* settings
// exported), DET_EXPERIMENT_CONFIG, DET_MODEL_DIR, DET_SCREENSHOTS, CHROMIUM (default
// /usr/bin/chromium).
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const url = process.env.DET_WEBUI_URL ?? "http://127.0.0.1:8080/";
const shots = process.env.DET_SCREENSHOTS ?? "webui-screenshots";
mkdirSync(shots, { recursive: true });

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
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(30_000);
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
  await step("pause and activate from the experiment page", async () => {
    await page.getByRole("button", { name: "Pause" }).click();
    await page.locator(".summary .badge", { hasText: "PAUSED" }).waitFor();
    await shot("06-experiment-paused");
    await page.getByRole("button", { name: "Activate" }).click();
    await page.locator(".summary .badge", { hasText: "ACTIVE" }).waitFor();
  });
  await step("the trial page follows the trial's logs", async () => {
    await page.getByTestId("trials").locator("a").first().click();
    await page.getByTestId("logs").filter({ hasText: "starting at step" }).waitFor({ timeout: 60_000 });
    await shot("07-trial");
  });
  await step("the autoscaling page shows the instance and why it was launched", async () => {
    await page.click("text=Autoscaling");
    await page.getByTestId("instances").locator("td", { hasText: "local-default-" }).first().waitFor();
    await page.getByTestId("decisions").getByText("pending slots need").first().waitFor();
    await shot("08-autoscaling");
  });
  await step("the job queue shows", async () => {
    await page.click("text=Job queue");
    await page.locator("h1", { hasText: "Job queue" }).waitFor();
    await shot("09-jobs");
  });
  await step("the experiment completes, and pages read at a tablet's width", async () => {
    await page.goto(`${url}#/experiments/${id}`);
    await page.locator(".summary .badge", { hasText: "COMPLETED" }).waitFor({ timeout: 120_000 });
    await page.getByTestId("best-metric").filter({ hasText: "trial" }).waitFor();
    await page.setViewportSize({ width: 768, height: 1024 });
    await shot("10-experiment-completed-768");
  });
} catch (error) {
  failed = true;
  console.error(`FAIL: ${error.message}`);
  await shot("failure").catch(() => {});
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

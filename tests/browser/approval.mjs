// The approval page in a real browser: opens the link a waiting run
// recorded, checks what the page shows, presses Approve, and checks that
// the decision started a new run. Fails on any console error, which is
// where Chromium reports a Content-Security-Policy violation.
//
//   node approval.mjs BASE API_KEY WORKFLOW_ID APPROVAL_URL
import { chromium } from "playwright-core";

const [base, key, workflowId, url] = process.argv.slice(2);
const fail = (why) => {
  console.error(`browser test failed: ${why}`);
  process.exit(1);
};

const api = async (path) => {
  const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  if (!r.ok) fail(`${path}: HTTP ${r.status}`);
  return r.json();
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--headless=new"],
});
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(String(e)));

  const shown = await page.goto(url);
  if (shown.status() !== 200) fail(`the page answered ${shown.status()}`);
  const headers = shown.headers();
  if (!headers["content-security-policy"]?.includes("default-src 'none'")) fail("no strict CSP");
  const domains = await page.locator("#domains li").allTextContents();
  if (domains.join(",") !== "alpha.example,beta.example") fail(`domains shown: ${domains}`);
  const message = await page.locator("#message").textContent();
  if (message !== "Ship <b>these</b>?") fail(`message shown: ${message}`);
  // The inline style applies (allowed by its hash): the body is centred.
  const margin = await page.evaluate(() => getComputedStyle(document.body).marginLeft);
  if (margin === "8px") fail("the page's style was blocked");

  await Promise.all([page.waitForNavigation(), page.click("#approve")]);
  const status = await page.locator("#status").getAttribute("data-status");
  if (status !== "approved") fail(`after pressing Approve the page says ${status}`);
  const runId = await page.locator("#run").textContent();

  // The decision's run finishes with the actions after the wait.
  let run;
  for (let i = 0; i < 100; i++) {
    run = await api(`/v1/workflows/${workflowId}/runs/${runId}`);
    if (run.finished_at) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (run.trigger_event !== "approval_received") fail(`run ${runId}: ${JSON.stringify(run)}`);
  if (run.status !== "success") fail(`run ${runId} ended ${run.status}: ${run.error}`);
  // Both domains took the branch that reads {{trigger.approval_decision}}.
  const branch = run.actions_executed[0]?.result?.branches?.[0];
  if (branch?.matched !== 2) fail(`the run did not branch on the decision: ${JSON.stringify(run.actions_executed)}`);

  // Opening the link again shows the decision instead of the buttons.
  await page.goto(url);
  if ((await page.locator("form").count()) !== 0) fail("the buttons are still there");
  if (problems.length) fail(`console errors: ${problems.join(" | ")}`);
  console.log(`browser test passed: approved in Chromium, run ${runId} ran after the wait`);
} finally {
  await browser.close();
}

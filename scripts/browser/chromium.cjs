// Shared by the browser checks: starts Debian's Chromium (never a browser
// playwright would download) in a fresh profile, records what went wrong
// on the page, runs the check, closes, and prints the result as one JSON
// line (exit 1 with the error on stderr when the check throws).
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];

// run calls check(page, out) with out = {consoleErrors, pageErrors,
// failedRequests (no answer, or one of 400 and up), ...extra}.
async function run(viewport, extra, check) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rerankd-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium", headless: true, args: FLAGS, viewport,
  });
  const out = { consoleErrors: [], pageErrors: [], failedRequests: [], ...extra };
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
    page.on("pageerror", (e) => out.pageErrors.push(String(e)));
    page.on("requestfailed", (r) => out.failedRequests.push(r.url()));
    page.on("response", (r) => { if (r.status() >= 400) out.failedRequests.push(r.status() + " " + r.url()); });
    await check(page, out);
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

function main(fn) {
  fn().catch((e) => { process.stderr.write(String((e && e.stack) || e) + "\n"); process.exit(1); });
}

module.exports = { run, main };

// Drives Debian's Chromium over rerankd's search explorer (/ui): enters the
// key, namespace, query and threshold, searches, and reports what the page
// shows. Prints one JSON object: {consoleErrors, pageErrors, failedRequests,
// results: [{text, stages, thresholdLines}], counts: {label: number},
// status, injected (an element or script run from memory text)}.
//
// Usage: node ui_check.cjs BASE_URL API_KEY NAMESPACE QUERY THRESHOLD SCREENSHOT.png
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

async function main() {
  const [base, key, ns, query, threshold, shot] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rerankd-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    viewport: { width: 1100, height: 1000 },
  });
  const out = { consoleErrors: [], pageErrors: [], failedRequests: [], results: [], counts: {}, status: "", injected: false };
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
    page.on("pageerror", (e) => out.pageErrors.push(String(e)));
    page.on("requestfailed", (r) => out.failedRequests.push(r.url()));
    page.on("response", (r) => { if (r.status() >= 400) out.failedRequests.push(r.status() + " " + r.url()); });
    page.on("dialog", async (d) => { out.injected = true; await d.dismiss(); });
    await page.goto(base + "/ui", { waitUntil: "networkidle" });
    await page.fill("#key", key);
    await page.fill("#ns", ns);
    await page.fill("#query", query);
    await page.fill("#threshold", threshold);
    await page.check("#recency");
    await page.click("#search button[type=submit]");
    await page.waitForSelector("#results li", { timeout: 20000 });
    out.status = await page.innerText("#status");
    out.results = await page.$$eval("#results li", (lis) => lis.map((li) => ({
      text: li.querySelector(".text").textContent,
      stages: [...li.querySelectorAll(".stage")].map((s) => s.dataset.stage),
      thresholdLines: li.querySelectorAll(".threshold").length,
    })));
    out.counts = await page.$$eval("#counts .count", (cs) => Object.fromEntries(cs.map((c) => [c.dataset.count, parseInt(c.querySelector("b").textContent, 10)])));
    out.injected = out.injected || (await page.evaluate(() => window.__xss === 1 || document.querySelectorAll("#results img, #results b").length > 0));
    await page.screenshot({ path: shot, fullPage: true });
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });

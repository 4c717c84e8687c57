// Drives Debian's Chromium over rerankd's search explorer (/ui): enters the
// key, namespace, query and threshold, searches, and reports what the page
// shows. Prints one JSON object: {consoleErrors, pageErrors, failedRequests,
// results: [{text, stages, thresholdLines}], counts: {label: number},
// status, injected (an element or script run from memory text)}.
//
// Usage: node ui_check.cjs BASE_URL API_KEY NAMESPACE QUERY THRESHOLD SCREENSHOT.png
const { run, main } = require("./chromium.cjs");

main(async () => {
  const [base, key, ns, query, threshold, shot] = process.argv.slice(2);
  await run({ width: 1100, height: 1000 }, { results: [], counts: {}, status: "", injected: false }, async (page, out) => {
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
  });
});

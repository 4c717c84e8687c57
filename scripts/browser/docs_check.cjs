// Drives Debian's Chromium over rerankd's API docs page: loads /docs, logs
// in with the API key under "Authorize", runs POST /rerank's example with
// "Try it out" and reads the answer Swagger UI shows. Prints one JSON
// object: {consoleErrors, pageErrors, failedRequests (no answer, or one of
// 400 and up), status, body}.
//
// Usage: node docs_check.cjs BASE_URL API_KEY SCREENSHOT.png
// (playwright-core found through NODE_PATH; see scripts/setup_browser.sh)
const { run, main } = require("./chromium.cjs");

main(async () => {
  const [base, key, shot] = process.argv.slice(2);
  await run({ width: 1280, height: 900 }, { status: 0, body: "" }, async (page, out) => {
    await page.goto(base + "/docs", { waitUntil: "networkidle" });
    await page.waitForSelector(".opblock-post", { timeout: 20000 });

    await page.click("button.authorize");
    await page.fill(".auth-container input", key);
    await page.click(".auth-btn-wrapper button.authorize");
    await page.click("button.btn-done");

    const op = page.locator(".opblock-post", { has: page.locator('[data-path="/rerank"]') }).first();
    await op.locator(".opblock-summary").click();
    await op.locator("button.try-out__btn").click();
    await op.locator("button.execute").click();
    const status = op.locator(".live-responses-table tbody .response-col_status").first();
    await status.waitFor({ timeout: 20000 });
    out.status = parseInt((await status.innerText()).trim(), 10);
    out.body = await op.locator(".live-responses-table tbody .response-col_description pre").first().innerText();
    await page.locator(".live-responses-table tbody").first().evaluate((el) => el.scrollIntoView({ block: "center" }));
    await page.screenshot({ path: shot, fullPage: false });
  });
});

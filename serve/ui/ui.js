// The search explorer: runs POST /v1/search with the user's key and shows
// each result's stage scores as bars, the threshold as a line, and how many
// candidates each stage kept. Only the public API is used. Memory text is
// only ever set as textContent, never parsed as HTML.
"use strict";

const STAGES = ["bm25", "lexical", "vector", "fused", "rerank", "recency", "mmr"];
const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function remember() {
  sessionStorage.setItem("rerankd-key", $("key").value);
  const ns = $("ns").value;
  const recent = JSON.parse(localStorage.getItem("rerankd-ns") || "[]").filter((x) => x !== ns);
  recent.unshift(ns);
  localStorage.setItem("rerankd-ns", JSON.stringify(recent.slice(0, 10)));
  fillRecent();
}

function fillRecent() {
  const list = $("recent-ns");
  list.replaceChildren();
  for (const ns of JSON.parse(localStorage.getItem("rerankd-ns") || "[]")) {
    const o = el("option");
    o.value = ns;
    list.append(o);
  }
}

function request() {
  const body = { namespace: $("ns").value, query: $("query").value };
  if ($("mode").value) body.mode = $("mode").value;
  const k = parseInt($("topk").value, 10);
  if (k > 0) body.top_k = k;
  if ($("threshold").value !== "") body.threshold = parseFloat($("threshold").value);
  if ($("rerank").value) body.rerank = $("rerank").value === "true";
  if ($("recency").checked) body.recency = {};
  if ($("mmr").checked) body.mmr = {};
  return body;
}

// bar draws one stage's score; scale is the value a full bar stands for.
function bar(name, value, scale, threshold, final) {
  const row = el("div", "stage" + (final ? " final" : ""));
  row.dataset.stage = name;
  row.append(el("span", "name", name));
  const track = el("div", "track");
  const fill = el("div", "bar");
  fill.style.width = (scale > 0 ? Math.max(0, Math.min(1, value / scale)) * 100 : 0) + "%";
  track.append(fill);
  if (threshold !== null && scale > 0) {
    const line = el("div", "threshold");
    line.title = "threshold " + threshold;
    line.style.left = Math.min(1, threshold / scale) * 100 + "%";
    track.append(line);
  }
  row.append(track, el("span", "value", value.toFixed(4)));
  return row;
}

function showCounts(c, threshold) {
  const box = $("counts");
  box.replaceChildren();
  const steps = [["retrieved", c.retrieved], ["reranked", c.reranked], ["above threshold", c.above_threshold], ["returned", c.returned]];
  steps.forEach(([label, n], i) => {
    const item = el("span", "count");
    item.dataset.count = label;
    item.append(el("b", "", String(n)), document.createTextNode(" " + label));
    if (i > 0 && steps[i - 1][1] > n) item.append(el("span", "dropped", " (dropped " + (steps[i - 1][1] - n) + ")"));
    box.append(item);
    if (i < steps.length - 1) box.append(el("span", "", "→"));
  });
  if (threshold !== null) box.append(el("span", "meta", "threshold " + threshold));
  box.hidden = false;
}

function showResults(res, threshold) {
  const list = $("results");
  list.replaceChildren();
  // Unbounded stages (BM25, RRF) are drawn against the best result's value;
  // probabilities in [0, 1] against 1.
  const scale = {};
  for (const s of STAGES.concat(["score"])) {
    const vals = res.results.map((r) => (s === "score" ? r.score : r.scores[s])).filter((v) => v !== undefined);
    const max = Math.max(0, ...vals);
    scale[s] = max <= 1 && vals.every((v) => v >= 0) ? 1 : max;
  }
  // The threshold applies to the rerank probability (a search without
  // rerank refuses one); its line goes on that bar.
  const on = "rerank";
  for (const r of res.results) {
    const li = el("li", "result");
    li.append(el("div", "text", r.text));
    const meta = [r.id, r.time ? new Date(r.time).toISOString() : "", r.source || ""].filter(Boolean).join(" · ");
    li.append(el("div", "meta", meta));
    for (const s of STAGES) {
      if (r.scores[s] !== undefined) li.append(bar(s, r.scores[s], scale[s], s === on ? threshold : null, false));
    }
    li.append(bar("score", r.score, scale.score, r.scores[on] === undefined ? threshold : null, true));
    list.append(li);
  }
}

async function search(ev) {
  ev.preventDefault();
  remember();
  const status = $("status");
  status.className = "";
  status.textContent = "searching…";
  const headers = { "Content-Type": "application/json" };
  if ($("key").value) headers.Authorization = "Bearer " + $("key").value;
  const body = request();
  try {
    const resp = await fetch("/v1/search", { method: "POST", headers, body: JSON.stringify(body) });
    const data = await resp.json();
    if (!resp.ok) {
      status.className = "error";
      status.textContent = resp.status + " " + (data.error_type || "") + ": " + (data.message || data.error || "");
      return;
    }
    const threshold = body.threshold === undefined ? null : body.threshold;
    status.textContent = data.results.length + " results · level " + data.level + (data.degraded ? " (" + data.degraded + ")" : "") +
      (data.reranked ? " · reranked by " + data.backend : " · not reranked") +
      " · " + (data.timing_ms.retrieve + data.timing_ms.rerank + data.timing_ms.post).toFixed(1) + " ms";
    showCounts(data.counts, threshold);
    showResults(data, threshold);
  } catch (e) {
    status.className = "error";
    status.textContent = "request failed: " + e;
  }
}

$("key").value = sessionStorage.getItem("rerankd-key") || "";
fillRecent();
$("search").addEventListener("submit", search);

/*
 * Report stage, browser code (METHOD.md §8, §5.7): the page's tabs, the paged query browser with its
 * filters, the episode view (attempts, failure types, retrieved memories, tokens per call), the
 * side-by-side diff of two episodes of one query and the memory-growth chart. Episode chunks are
 * loaded on demand with <script> tags (file:// safe). All text goes through textContent.
 */
(function () {
  "use strict";
  var F = window.meritFilter;
  var R = F.decodeRows(window.MERIT_REPORT);
  var PAGE = 50;
  var state = { rows: [], page: 0, open: -1, filterKey: "" };
  var chunks = {};
  var waiting = {};

  function $(id) { return document.getElementById(id); }
  var el = window.MeritEpisodeView.el;
  var badge = window.MeritEpisodeView.badge;
  function fill(select, values, labels) {
    values.forEach(function (v, i) { select.appendChild(el("option", { value: String(v), text: labels ? labels[i] : String(v) })); });
  }
  /** Tokens of a row; "n/a" (or "N + n/a") when the initial call's tokens are unknown (imported predictions). */
  function tokensText(rows, i) {
    if (rows.initialTokensKnown[i]) return String(rows.tokens[i]);
    return rows.tokens[i] === 0 ? "n/a" : rows.tokens[i] + " + n/a";
  }
  function unique(xs) { return xs.filter(function (x, i) { return xs.indexOf(x) === i; }); }

  /* ---------- chunks ---------- */
  window.meritReportChunk = function (n, payload) {
    payload.byRow = {};
    payload.episodes.forEach(function (e) { payload.byRow[e.row] = e; });
    chunks[n] = payload;
    (waiting[n] || []).forEach(function (w) { w.resolve(payload); });
    delete waiting[n];
  };
  function loadChunk(n) {
    if (chunks[n]) return Promise.resolve(chunks[n]);
    return new Promise(function (resolve, reject) {
      var first = !waiting[n];
      (waiting[n] = waiting[n] || []).push({ resolve: resolve, reject: reject });
      if (!first) return;
      var s = document.createElement("script");
      s.src = "report-data/episodes-" + String(n).padStart(3, "0") + ".js";
      s.onerror = function () {
        (waiting[n] || []).forEach(function (w) { w.reject(new Error("could not load " + s.src)); });
        delete waiting[n];
      };
      document.head.appendChild(s);
    });
  }

  /* ---------- tabs ---------- */
  function showTab(name) {
    ["summary", "queries", "memory"].forEach(function (t) {
      $(t).hidden = t !== name;
      $("tab-" + t).setAttribute("aria-selected", String(t === name));
    });
  }
  function route() {
    var h = location.hash.replace(/^#/, "");
    var m = /^episode-(\d+)$/.exec(h);
    if (m) { showTab("queries"); openEpisode(Number(m[1]), false); }
    else showTab(h === "queries" || h === "memory" ? h : "summary");
  }

  /* ---------- query browser ---------- */
  var methods = unique(R.runs.map(function (r) { return r.method; })).sort();
  var seeds = unique(R.runs.map(function (r) { return r.seed; })).sort(function (a, b) { return a - b; });
  function readFilters() {
    return {
      dataset: $("f-dataset").value, method: $("f-method").value, seed: $("f-seed").value,
      initial: $("f-initial").value, final: $("f-final").value, failure: $("f-failure").value,
      failureScope: $("f-failure-scope").value, repairedA: $("f-repaired-a").value, repairedB: $("f-repaired-b").value,
      text: $("f-text").value,
    };
  }
  function applyFilters() {
    var f = readFilters();
    var key = JSON.stringify(f);
    if (key === state.filterKey) return;
    state.filterKey = key;
    state.rows = F.filterRows(R, f);
    state.page = 0;
    renderRows();
  }
  function renderRows() {
    var body = $("rows").tBodies[0];
    body.textContent = "";
    var pages = Math.max(1, Math.ceil(state.rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE;
    var slice = state.rows.slice(start, start + PAGE);
    var q = R.queries;
    var rows = R.rows;
    slice.forEach(function (i, k) {
      var run = R.runs[rows.run[i]];
      var query = rows.query[i];
      var tr = el("tr", { tabindex: k === 0 ? "0" : "-1", "data-row": String(i), "aria-selected": String(i === state.open) }, [
        el("td", { text: R.datasets[q.dataset[query]] }),
        el("td", { text: q.id[query] }),
        el("td", { cls: "db", text: q.db[query], title: q.db[query] }),
        el("td", { cls: "question", text: q.question[query] || "—", title: q.question[query] }),
        el("td", { text: run.method }),
        el("td", { text: String(run.seed) }),
        el("td", null, [badge(R.statuses[rows.initial[i]])]),
        el("td", null, [badge(R.statuses[rows.final[i]])]),
        el("td", { text: rows.failure[i] < 0 ? "—" : R.errorTypes[rows.failure[i]] }),
        el("td", { cls: "num", text: String(rows.steps[i]) }),
        el("td", { cls: "num", text: tokensText(rows, i), title: rows.initialTokensKnown[i] ? "" : "the initial SQL was imported from a predictions file: its tokens are unknown" }),
      ]);
      body.appendChild(tr);
    });
    $("row-count").textContent = state.rows.length + " of " + rows.run.length + " episodes match";
    $("page-info").textContent = "page " + (state.page + 1) + " of " + pages;
    $("page-prev").disabled = state.page === 0;
    $("page-next").disabled = state.page >= pages - 1;
  }
  function onRowsKey(ev) {
    var tr = ev.target.closest("tr[data-row]");
    if (!tr) return;
    var next = null;
    var body = tr.parentNode;
    if (ev.key === "ArrowDown") next = tr.nextElementSibling;
    else if (ev.key === "ArrowUp") next = tr.previousElementSibling;
    else if (ev.key === "Home") next = body.firstElementChild;
    else if (ev.key === "End") next = body.lastElementChild;
    else if (ev.key === "PageDown" || ev.key === "PageUp") {
      var pages = Math.ceil(state.rows.length / PAGE);
      var page = state.page + (ev.key === "PageDown" ? 1 : -1);
      if (page < 0 || page >= pages) return;
      ev.preventDefault();
      state.page = page;
      renderRows();
      body.firstElementChild.focus();
      return;
    }
    else if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openEpisode(Number(tr.getAttribute("data-row")), true); return; }
    else return;
    ev.preventDefault();
    if (next) { tr.tabIndex = -1; next.tabIndex = 0; next.focus(); }
  }

  /* ---------- episode view ---------- */
  function openEpisode(row, focus) {
    if (!(row >= 0 && row < R.rows.run.length)) return;
    state.open = row;
    if (location.hash !== "#episode-" + row) history.replaceState(null, "", "#episode-" + row);
    var panel = $("episode");
    panel.textContent = "";
    panel.appendChild(el("p", { text: "Loading episode…" }));
    var query = R.rows.query[row];
    loadChunk(R.queries.chunk[query]).then(function (chunk) {
      window.MeritEpisodeView.render(panel, R, chunk, row, loadChunk);
      Array.prototype.forEach.call($("rows").tBodies[0].rows, function (tr) { tr.setAttribute("aria-selected", String(Number(tr.getAttribute("data-row")) === row)); });
      if (focus) panel.focus();
    }, function (err) {
      panel.textContent = "";
      panel.appendChild(el("p", { cls: "error", text: String(err.message || err) }));
    });
  }

  /* ---------- memory growth ---------- */
  function renderGrowth() {
    var box = $("growth");
    box.textContent = "";
    var dataset = $("m-dataset").value;
    var seed = Number($("m-seed").value);
    var series = R.growth.filter(function (g) { var r = R.runs[g.run]; return r.dataset === dataset && r.seed === seed; });
    if (series.length === 0) { box.appendChild(el("p", { text: "No memory runs for this dataset and seed." })); return; }
    window.MeritEpisodeView.growthChart(box, R, series, $("m-polarity").value);
  }

  /* ---------- start ---------- */
  function start() {
    if (R.warnings.length > 0) {
      var w = $("warnings");
      w.appendChild(el("p", { text: "Notes from building this report:" }));
      w.appendChild(el("ul", null, R.warnings.map(function (t) { return el("li", { text: t }); })));
    }
    fill($("f-dataset"), R.datasets);
    fill($("f-method"), methods);
    fill($("f-seed"), seeds);
    fill($("f-initial"), R.statuses);
    fill($("f-final"), R.statuses);
    fill($("f-failure"), R.errorTypes);
    fill($("f-repaired-a"), methods);
    fill($("f-repaired-b"), methods);
    fill($("m-dataset"), R.datasets);
    fill($("m-seed"), seeds);
    $("filters").addEventListener("change", applyFilters);
    $("filters").addEventListener("submit", function (ev) { ev.preventDefault(); });
    var timer = null;
    $("f-text").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilters, 150); });
    $("f-reset").addEventListener("click", function () { $("filters").reset(); applyFilters(); });
    $("page-prev").addEventListener("click", function () { state.page--; renderRows(); });
    $("page-next").addEventListener("click", function () { state.page++; renderRows(); });
    var tbody = $("rows").tBodies[0];
    tbody.addEventListener("keydown", onRowsKey);
    tbody.addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr[data-row]");
      if (tr) openEpisode(Number(tr.getAttribute("data-row")), true);
    });
    $("m-dataset").addEventListener("change", renderGrowth);
    $("m-seed").addEventListener("change", renderGrowth);
    $("m-polarity").addEventListener("change", renderGrowth);
    window.addEventListener("hashchange", route);
    applyFilters();
    renderGrowth();
    route();
    document.body.setAttribute("data-ready", "true");
  }
  start();
})();

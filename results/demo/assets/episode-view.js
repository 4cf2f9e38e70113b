/*
 * Report stage, browser code (METHOD.md §6.1, §5.7, §4.1): renders one episode — question, evidence,
 * schema, every attempt with status, DB error and failure type, tokens per LLM call, reflections and
 * the retrieved memories with dense/BM25/final scores and provenance — the side-by-side diff of two
 * episodes of the same query, and the memory-growth chart. Defines window.MeritEpisodeView (also
 * the DOM helpers el and badge that viewer.js uses).
 */
(function () {
  "use strict";
  var PALETTE = ["#1f5fa8", "#b3471b", "#2a7a2a", "#8a2f8a", "#7a5a00", "#b0245f", "#146b6b", "#555555", "#5b3fb5", "#9c3d00", "#3d6b00", "#a0005a", "#00607a"];
  var DASHES = ["", "6 3", "2 2", "8 3 2 3"];

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function badge(status) { return el("span", { cls: "badge s-" + String(status).toLowerCase(), text: status || "—" }); }
  function fmt(x) { return typeof x === "number" ? x.toFixed(3) : "—"; }
  function table(caption, head, rows, cls) {
    return el("div", { cls: "scroll" }, [el("table", { cls: cls || "" }, [
      el("caption", { text: caption }),
      el("thead", null, [el("tr", null, head.map(function (h) { return el("th", { scope: "col", text: h }); }))]),
      el("tbody", null, rows.map(function (r) { return el("tr", null, r.map(function (c) { return c instanceof Node ? el("td", null, [c]) : el("td", { text: String(c) }); })); })),
    ])]);
  }
  function sql(text) { return el("pre", { cls: "sql" }, [el("code", { text: text === "" ? "(no SQL in the model output)" : text })]); }
  function runName(R, run) { var r = R.runs[run]; return r.method + " · seed " + r.seed; }

  /** The attempts of an episode: one row per attempt; the outcome cell stacks status, failure type and DB error. */
  function attemptsTable(e) {
    return table("Attempts (attempt 0 is the cached initial SQL)", ["#", "SQL", "Outcome"], e.attempts.map(function (a, i) {
      return [String(i), sql(a), el("div", { cls: "outcome" }, [
        badge(e.statuses[i]),
        el("div", { cls: "ftype", text: e.errorTypes[i] ? "failure type: " + e.errorTypes[i] : "" }),
        e.dbErrors[i] === null ? null : el("div", { cls: "dberror", text: e.dbErrors[i] }),
      ])];
    }), "attempts");
  }

  function tokensTable(e) {
    // imported initial predictions: the cache records null for call 0's tokens, so show "n/a", not 0
    var unknown = function (i) { return i === 0 && e.initialTokensKnown === false; };
    return table("Tokens per LLM call", ["Call", "Kind", "Prompt tokens", "Output tokens", "Truncated prompt tokens"], e.callKinds.map(function (k, i) {
      return [String(i), k, unknown(i) ? "n/a" : String(e.promptTokens[i]), unknown(i) ? "n/a" : String(e.outputTokens[i]), unknown(i) ? "n/a" : String(e.truncatedTokens[i])];
    }), "tokens");
  }

  function retrievalBlock(R, chunk, row, e) {
    var run = R.rows.run[row];
    var entries = chunk.entries[run] || {};
    var box = el("div", { cls: "retrieval" }, [el("h4", { text: "Retrieved memories" })]);
    if (e.retrieval.length === 0) { box.appendChild(el("p", { text: R.runs[run].hasMemory ? "No retrieval was logged for this episode (no repair step)." : "This method keeps no memory." })); return box; }
    e.retrieval.forEach(function (s) {
      var facts = "error type " + s.errorType + " · legal pool " + s.legalPool + " · typed pool " + s.typedPool + " · type filter " + (s.typeFilter ? "on" : "off") + (s.fallback ? " · fallback to all legal entries" : "") + " · dense search " + s.denseSearch;
      var head = ["Polarity", "Type", "Dense", "BM25", "Type match", "Final", "Provenance"];
      var body = el("tbody");
      s.hits.forEach(function (h) {
        var en = entries[h.id];
        var prov = h.sourceDb + " @ stream position " + h.sourcePosition + (en ? " · query " + en.sourceQuery + " · seen " + en.confirmations + "× (" + en.successes + " ok, " + en.failures + " failed)" : "");
        var cells = [el("span", { cls: "pol-" + h.polarity, text: h.polarity }), h.errorType, fmt(h.dense), fmt(h.bm25), fmt(h.typeMatch), fmt(h.final), prov];
        body.appendChild(el("tr", { cls: "hit" }, cells.map(function (c) { return c instanceof Node ? el("td", null, [c]) : el("td", { cls: /^\d/.test(c) ? "num" : "", text: c }); })));
        body.appendChild(el("tr", { cls: "transition" }, [el("td", { colspan: String(head.length) }, [el("span", { cls: "label", text: "transition: " }), en ? sql(en.delta) : el("code", { text: "entry " + h.id.slice(0, 12) + " is not in memory/" })])]));
      });
      var step = el("details", { cls: "step" }, [
        el("summary", { cls: "facts", text: "Repair step " + s.step + " (" + s.hits.length + " retrieved): " + facts }),
        s.hits.length > 0 ? el("div", { cls: "scroll" }, [el("table", { cls: "hits" }, [
          el("caption", { text: "Memories retrieved before repair step " + s.step }),
          el("thead", null, [el("tr", null, head.map(function (x) { return el("th", { scope: "col", text: x }); }))]),
          body,
        ])]) : el("p", { text: "Nothing retrieved (empty pool)." }),
      ]);
      // Long episodes start with only the first step open; each step is one keyboard-operable <details>.
      if (e.retrieval.length <= 2 || s === e.retrieval[0]) step.open = true;
      box.appendChild(step);
    });
    return box;
  }

  function episodeColumn(R, chunk, row) {
    var e = chunk.byRow[row];
    var run = R.rows.run[row];
    var col = el("div", { cls: "episode-col" }, [el("h3", { text: runName(R, run) + " (" + R.runs[run].label + ")" })]);
    if (!e) { col.appendChild(el("p", { cls: "error", text: "Episode missing from its chunk." })); return col; }
    col.appendChild(attemptsTable(e));
    if (e.reflections.length > 0) col.appendChild(el("div", null, [el("h4", { text: "Reflections" }), el("ol", null, e.reflections.map(function (t) { return el("li", { text: t }); }))]));
    col.appendChild(retrievalBlock(R, chunk, row, e));
    col.appendChild(tokensTable(e));
    return col;
  }

  /** Word diff of the two episodes' final SQL. */
  function finalDiff(R, chunk, a, b) {
    var x = chunk.byRow[a];
    var y = chunk.byRow[b];
    var pre = el("pre", { cls: "sql diff", "aria-label": "Word diff of the final SQL" });
    window.meritFilter.diffWords(x.attempts[x.attempts.length - 1], y.attempts[y.attempts.length - 1]).forEach(function (p) {
      pre.appendChild(p.op === "same" ? document.createTextNode(p.text) : el(p.op === "del" ? "del" : "ins", { text: p.text }));
    });
    return el("div", null, [el("h4", { text: "Final SQL: " + runName(R, R.rows.run[a]) + " (deleted) → " + runName(R, R.rows.run[b]) + " (inserted)" }), pre]);
  }

  function render(panel, R, chunk, row, loadChunk) {
    var q = R.rows.query[row];
    var dataset = R.datasets[R.queries.dataset[q]];
    var db = R.queries.db[q];
    panel.textContent = "";
    panel.appendChild(el("h2", { text: "Episode: " + dataset + " query " + R.queries.id[q] + " · " + runName(R, R.rows.run[row]) }));
    panel.appendChild(el("p", { cls: "question" }, [el("strong", { text: "Question: " }), R.queries.question[q] || "(question unavailable)"]));
    if (chunk.evidence[q]) panel.appendChild(el("p", null, [el("strong", { text: "Evidence: " }), chunk.evidence[q]]));
    var schema = chunk.schemas[dataset + "/" + db];
    panel.appendChild(el("details", null, [el("summary", { text: "Schema of " + db }), el("pre", { cls: "schema", text: schema || "(schema unavailable)" })]));
    var others = [];
    for (var i = 0; i < R.rows.run.length; i++) if (R.rows.query[i] === q && i !== row) others.push(i);
    var select = el("select", { id: "compare" }, [el("option", { value: "", text: "— none —" })].concat(others.map(function (i) {
      return el("option", { value: String(i), text: runName(R, R.rows.run[i]) + " (" + R.runs[R.rows.run[i]].label + ")" });
    })));
    panel.appendChild(el("p", { cls: "compare" }, [el("label", { for: "compare", text: "Compare side by side with " }), select]));
    var grid = el("div", { cls: "episode-grid" }, [episodeColumn(R, chunk, row)]);
    panel.appendChild(grid);
    select.addEventListener("change", function () {
      grid.textContent = "";
      grid.appendChild(episodeColumn(R, chunk, row));
      grid.classList.toggle("two", select.value !== "");
      var old = panel.querySelector(".final-diff");
      if (old) old.remove();
      if (select.value === "") return;
      var other = Number(select.value);
      grid.appendChild(episodeColumn(R, chunk, other));
      var d = finalDiff(R, chunk, row, other);
      d.className = "final-diff";
      panel.insertBefore(d, grid);
    });
  }

  /** SVG step chart: memory entries after each stream position, one line per run; `which` = total, positive or negative. */
  function growthChart(box, R, series, which) {
    var W = 760, H = 320, L = 56, B = 40, T = 12, RM = 28;
    var maxX = 1, maxY = 1;
    var size = function (g, j) { return which === "positive" ? g.positive[j] : which === "negative" ? g.negative[j] : g.positive[j] + g.negative[j]; };
    series.forEach(function (g) {
      maxX = Math.max(maxX, g.position[g.position.length - 1] || 0);
      if (g.position.length > 0) maxY = Math.max(maxY, size(g, g.position.length - 1));
    });
    for (var i = 0; i < R.rows.run.length; i++) if (series.some(function (g) { return g.run === R.rows.run[i]; })) maxX = Math.max(maxX, R.rows.position[i]);
    var sx = function (x) { return L + (x / maxX) * (W - L - RM); };
    var sy = function (y) { return H - B - (y / maxY) * (H - B - T); };
    var NS = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Memory entries (" + (which === "total" ? "positive + negative" : which) + ") over the stream; the table below gives the final counts");
    var add = function (tag, attrs, text) {
      var e = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
    };
    add("line", { x1: L, y1: H - B, x2: W - RM, y2: H - B, stroke: "#333" });
    add("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#333" });
    [0, 0.5, 1].forEach(function (f) {
      add("text", { x: L - 6, y: sy(maxY * f) + 4, "text-anchor": "end", "font-size": 12 }, String(Math.round(maxY * f)));
      add("text", { x: sx(maxX * f), y: H - B + 16, "text-anchor": "middle", "font-size": 12 }, String(Math.round(maxX * f)));
    });
    add("text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12 }, "stream position");
    add("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 12, transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, which === "total" ? "entries" : which + " entries");
    var legend = el("ul", { cls: "legend" });
    series.forEach(function (g, k) {
      var d = "M" + sx(0) + "," + sy(0);
      g.position.forEach(function (p, j) { d += " H" + sx(p) + " V" + sy(size(g, j)); });
      d += " H" + sx(maxX);
      var color = PALETTE[k % PALETTE.length];
      add("path", { d: d, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": DASHES[Math.floor(k / PALETTE.length) % DASHES.length] });
      legend.appendChild(el("li", null, [el("span", { cls: "swatch", style: "background:" + color }), R.runs[g.run].method + " (" + R.runs[g.run].label + ")"]));
    });
    box.appendChild(svg);
    box.appendChild(legend);
    box.appendChild(table("Memory size at the end of the stream", ["Run", "Positive", "Negative", "Total"], series.map(function (g) {
      var p = g.positive[g.positive.length - 1] || 0, n = g.negative[g.negative.length - 1] || 0;
      return [R.runs[g.run].method + " (" + R.runs[g.run].label + ")", String(p), String(n), String(p + n)];
    })));
  }

  // el and badge are shared with viewer.js (loaded after this file).
  window.MeritEpisodeView = { render: render, growthChart: growthChart, el: el, badge: badge };
})();

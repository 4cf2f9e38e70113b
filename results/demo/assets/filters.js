/*
 * Report stage, browser code (METHOD.md §8): the query browser's row filter over the columnar index
 * of report-data/index.js. Pure: takes the index and a filter state, returns the matching row numbers.
 * Loaded as a classic script (file:// safe); defines window.meritFilter.
 */
(function (root) {
  "use strict";

  /**
   * Rows of `index` matching `f`. Every field is optional: dataset/method (names), seed (number),
   * initial/final (status names), failure (error type name) with scope "initial" or "any",
   * repairedA/repairedB (method names: keep (query, seed) pairs that A repaired — initial wrong,
   * final right — and B ended wrong), text (query id, or a substring of question or db_id).
   */
  function filterRows(index, f) {
    var rows = index.rows;
    var runs = index.runs;
    var q = index.queries;
    var n = rows.run.length;
    var datasetCode = f.dataset ? index.datasets.indexOf(f.dataset) : -1;
    var initialCode = f.initial ? index.statuses.indexOf(f.initial) : -1;
    var finalCode = f.final ? index.statuses.indexOf(f.final) : -1;
    var failureCode = f.failure ? index.errorTypes.indexOf(f.failure) : -1;
    var seed = f.seed === undefined || f.seed === "" || f.seed === null ? null : Number(f.seed);
    var pairs = f.repairedA && f.repairedB ? repairedPairs(index, f.repairedA, f.repairedB) : null;
    var text = f.text ? String(f.text).trim().toLowerCase() : "";
    var out = [];
    for (var i = 0; i < n; i++) {
      var run = runs[rows.run[i]];
      var query = rows.query[i];
      if (datasetCode >= 0 && q.dataset[query] !== datasetCode) continue;
      if (f.method && run.method !== f.method) continue;
      if (seed !== null && run.seed !== seed) continue;
      if (initialCode >= 0 && rows.initial[i] !== initialCode) continue;
      if (finalCode >= 0 && rows.final[i] !== finalCode) continue;
      if (failureCode >= 0) {
        if (f.failureScope === "any" ? (rows.failureMask[i] & (1 << failureCode)) === 0 : rows.failure[i] !== failureCode) continue;
      }
      if (pairs !== null && !pairs.has(query + ":" + run.seed)) continue;
      if (text !== "" && q.id[query].toLowerCase() !== text && q.question[query].toLowerCase().indexOf(text) < 0 && q.db[query].toLowerCase().indexOf(text) < 0) continue;
      out.push(i);
    }
    return out;
  }

  /** "query:seed" keys where method a repaired the query and method b ended wrong on the same seed. */
  function repairedPairs(index, a, b) {
    var rows = index.rows;
    var repairedByA = new Set();
    var wrongForB = new Set();
    for (var i = 0; i < rows.run.length; i++) {
      var run = index.runs[rows.run[i]];
      var key = rows.query[i] + ":" + run.seed;
      if (run.method === a && rows.initialCorrect[i] === 0 && rows.finalCorrect[i] === 1) repairedByA.add(key);
      if (run.method === b && rows.finalCorrect[i] === 0) wrongForB.add(key);
    }
    var out = new Set();
    repairedByA.forEach(function (key) {
      if (wrongForB.has(key)) out.add(key);
    });
    return out;
  }

  /** Word-level diff of two SQL strings: [{op: "same"|"del"|"ins", text}] by longest common subsequence. */
  function diffWords(a, b) {
    var x = a.split(/(\s+)/).filter(Boolean);
    var y = b.split(/(\s+)/).filter(Boolean);
    if (x.length * y.length > 250000) return [{ op: "del", text: a }, { op: "ins", text: b }];
    var m = x.length;
    var k = y.length;
    var dp = new Array((m + 1) * (k + 1)).fill(0);
    for (var i = m - 1; i >= 0; i--) {
      for (var j = k - 1; j >= 0; j--) {
        dp[i * (k + 1) + j] = x[i] === y[j] ? dp[(i + 1) * (k + 1) + j + 1] + 1 : Math.max(dp[(i + 1) * (k + 1) + j], dp[i * (k + 1) + j + 1]);
      }
    }
    var out = [];
    var push = function (op, text) {
      if (out.length > 0 && out[out.length - 1].op === op) out[out.length - 1].text += text;
      else out.push({ op: op, text: text });
    };
    i = 0;
    j = 0;
    while (i < m && j < k) {
      if (x[i] === y[j]) { push("same", x[i]); i++; j++; }
      else if (dp[(i + 1) * (k + 1) + j] >= dp[i * (k + 1) + j + 1]) { push("del", x[i]); i++; }
      else { push("ins", y[j]); j++; }
    }
    while (i < m) push("del", x[i++]);
    while (j < k) push("ins", y[j++]);
    return out;
  }

  /** Restores the integer row columns written by lib/report/column-codec.ts (string: code unit − 48 per row). */
  function decodeRows(index) {
    if (index.rowsDecoded) return index;
    Object.keys(index.rows).forEach(function (key) {
      var col = index.rows[key];
      if (typeof col !== "string") { index.rows[key] = Int32Array.from(col); return; }
      var out = new Int32Array(col.length);
      for (var i = 0; i < col.length; i++) out[i] = col.charCodeAt(i) - 48;
      index.rows[key] = out;
    });
    index.rowsDecoded = true;
    return index;
  }

  root.meritFilter = { filterRows: filterRows, repairedPairs: repairedPairs, diffWords: diffWords, decodeRows: decodeRows };
})(typeof window !== "undefined" ? window : globalThis);

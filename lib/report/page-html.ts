/**
 * Report stage, pure core (METHOD.md §9): the static index.html of the report — the summary tab
 * (tables rendered from the same Table values as the CSV/Markdown files, figures referenced by
 * relative path) and the empty shells the browser code (assets/viewer.js) fills from report-data/index.js.
 * @module
 */
import { shownColumns, type Table } from "../analysis/table.ts";

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

/** One results table as an accessible HTML table (caption, column headers, row headers in column 0). */
export function tableHtml(table: Table): string {
  const shown = shownColumns(table);
  const rules = new Set(table.rulesBefore ?? []);
  const head = shown.map((i) => `<th scope="col" class="${table.align[i] === "r" ? "num" : ""}">${escapeHtml(table.columns[i])}</th>`).join("");
  const body = table.rows
    .map((row, r) => {
      const cells = shown.map((i) => {
        const cell = row[i];
        let text = escapeHtml(cell.text);
        if (cell.underline) text = `<u>${text}</u>`;
        if (cell.bold) text = `<strong>${text}</strong>`;
        const cls = table.align[i] === "r" ? ' class="num"' : "";
        return i === 0 ? `<th scope="row"${cls}>${text}</th>` : `<td${cls}>${text}</td>`;
      });
      return `<tr${rules.has(r) ? ' class="rule"' : ""}>${cells.join("")}</tr>`;
    })
    .join("\n");
  const notes = table.notes.length > 0 ? `<ul class="notes">${table.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>` : "";
  const id = escapeHtml(table.id);
  return `<figure class="table" id="${id}"><h3 id="${id}-title">${id}: ${escapeHtml(table.title)}</h3><div class="scroll"><table aria-labelledby="${id}-title">
<thead><tr>${head}</tr></thead>
<tbody>
${body}
</tbody></table></div>${notes}</figure>`;
}

export interface PageOptions {
  title: string;
  tables: readonly Table[];
  /** Figure files relative to the page, e.g. `figures/ex-per-method.svg`. */
  figures: readonly string[];
  /** The runs' model identity line ("Model: …", model-identity.ts), shown under the title. */
  modelLine?: string;
  /** The test-model banner, shown prominently above everything when present. */
  banner?: string | null;
}

const FILTERS = [
  ["f-dataset", "Dataset"],
  ["f-method", "Method"],
  ["f-seed", "Seed"],
  ["f-initial", "Initial status"],
  ["f-final", "Final status"],
  ["f-failure", "Failure type"],
] as const;

/** The whole index.html. */
export function pageHtml(opts: PageOptions): string {
  const figures = opts.figures
    .map((f) => `<figure class="figure"><img src="${escapeHtml(f)}" alt="${escapeHtml(figureAlt(f))}" loading="lazy"><figcaption>${escapeHtml(f)}</figcaption></figure>`)
    .join("\n");
  const filters = FILTERS.map(([id, label]) => `<label>${label}<select id="${id}"><option value="">all</option></select></label>`).join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<link rel="stylesheet" href="assets/viewer.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>${opts.banner ? `<p class="banner" role="alert">${escapeHtml(opts.banner)}</p>\n` : ""}<h1>${escapeHtml(opts.title)}</h1>${opts.modelLine ? `\n<p class="model">${escapeHtml(opts.modelLine)}</p>` : ""}
<nav aria-label="Report sections"><ul class="tabs" role="tablist">
<li role="presentation"><a role="tab" href="#summary" id="tab-summary" aria-controls="summary">Tables &amp; figures</a></li>
<li role="presentation"><a role="tab" href="#queries" id="tab-queries" aria-controls="queries">Queries</a></li>
<li role="presentation"><a role="tab" href="#memory" id="tab-memory" aria-controls="memory">Memory growth</a></li>
</ul></nav></header>
<main id="main">
<div id="warnings" role="status"></div>
<section id="summary" class="panel" role="tabpanel" aria-labelledby="tab-summary">
<h2>Tables</h2>
${opts.tables.length > 0 ? opts.tables.map(tableHtml).join("\n") : "<p>No tables were written.</p>"}
<h2>Figures</h2>
${figures || "<p>No figures were written (the report ran with --no-figures).</p>"}
</section>
<section id="queries" class="panel" role="tabpanel" aria-labelledby="tab-queries" hidden>
<h2>Per-query browser</h2>
<form id="filters" class="filters" aria-label="Filters">
${filters}
<label>Steps with failure type<select id="f-failure-scope"><option value="initial">initial attempt</option><option value="any">any attempt</option></select></label>
<fieldset><legend>Repaired by A but not by B (same seed)</legend>
<label>A<select id="f-repaired-a"><option value="">—</option></select></label>
<label>B<select id="f-repaired-b"><option value="">—</option></select></label></fieldset>
<label>Query id or text<input id="f-text" type="search" placeholder="e.g. 17 or singer"></label>
<button type="button" id="f-reset">Reset filters</button>
</form>
<p id="row-count" role="status" aria-live="polite"></p>
<div class="scroll"><table id="rows" class="rows"><caption class="sr-only">Episodes matching the filters; arrow keys move between rows, Page Up/Down change page, Enter opens a row</caption>
<thead><tr><th scope="col">Dataset</th><th scope="col">Query</th><th scope="col">DB</th><th scope="col">Question</th><th scope="col">Method</th><th scope="col">Seed</th><th scope="col">Initial</th><th scope="col">Final</th><th scope="col">Failure type</th><th scope="col" class="num">Steps</th><th scope="col" class="num">Tokens</th></tr></thead>
<tbody></tbody></table></div>
<nav class="pager" aria-label="Pages"><button type="button" id="page-prev">← Previous</button><span id="page-info"></span><button type="button" id="page-next">Next →</button></nav>
<section id="episode" aria-live="polite" tabindex="-1"></section>
</section>
<section id="memory" class="panel" role="tabpanel" aria-labelledby="tab-memory" hidden>
<h2>Memory growth over the stream</h2>
<form class="filters" aria-label="Memory growth selection">
<label>Dataset<select id="m-dataset"></select></label>
<label>Seed<select id="m-seed"></select></label>
<label>Entries<select id="m-polarity"><option value="total">positive + negative</option><option value="positive">positive</option><option value="negative">negative</option></select></label>
</form>
<div id="growth"></div>
</section>
</main>
<noscript><p>The query browser needs JavaScript; the tables above do not.</p></noscript>
<script src="report-data/index.js"></script>
<script src="assets/filters.js"></script>
<script src="assets/episode-view.js"></script>
<script src="assets/viewer.js"></script>
</body>
</html>
`;
}

/** `figures/ex-per-method.svg` → `Figure: ex per method`. */
function figureAlt(file: string): string {
  const base = file.split("/").pop() ?? file;
  return `Figure: ${base.replace(/\.[a-z]+$/, "").replace(/[-_]/g, " ")}`;
}

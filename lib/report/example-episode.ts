/**
 * Report stage, the paper's Figure 2 (METHOD.md §6.1, §5.7, §4.1; `merit report --example`): one
 * episode of a memory method drawn as a figure — the question, the failed attempt with its status,
 * type and DBMS error, the precedents retrieved for the repair, and the repair with its verdict —
 * as a hand-built SVG (every text escaped, long SQL wrapped). Pure: run data in, SVG text out.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { userFacingDbError } from "./db-error-text.ts";
import type { RunInput } from "./run-reader.ts";

/** One retrieved precedent as the figure shows it. */
export interface Precedent {
  polarity: string;
  errorType: string;
  sourceDb: string;
  /** Query id of the entry's source episode; null when the entry is not in the run's memory files. */
  sourceQuery: string | null;
  /** Final fused score (METHOD.md §5.4). */
  score: number;
  /** The entry's `attempted_sql_delta` (`before => after`, METHOD.md §4.2); null when not in memory. */
  delta: string | null;
}

/** The content of Figure 2 for one query of one run. */
export interface ExampleEpisode {
  dataset: string;
  method: string;
  seed: number;
  queryId: string;
  dbId: string;
  /** null when the dataset files were not at hand. */
  question: string | null;
  /** The repair step shown (1-based): the episode's last, i.e. the successful repair when there is one. */
  step: number;
  /** Attempts in the episode (initial one included). */
  attempts: number;
  failed: { sql: string; status: string; errorType: string | null; dbError: string | null };
  retrieval: { legalPool: number; typedPool: number; fallback: boolean; typeFilter: boolean };
  precedents: Precedent[];
  repair: { sql: string; status: string };
}

/**
 * The example episode of `queryId` in `run` (a memory method's run: it needs retrieval_log.jsonl).
 * Throws MeritError naming the run and the fix when the query is absent, initially correct, never
 * repaired, or the run retrieved nothing.
 */
export function exampleEpisode(run: RunInput, queryId: string, question: string | null): ExampleEpisode {
  const t = run.trajectories.find((x) => x.query_id === queryId);
  const where = `${run.dir} (${run.trajectories[0]?.method ?? "?"}, seed ${run.trajectories[0]?.stream_seed ?? "?"})`;
  if (t === undefined) throw new MeritError(`--example: query ${queryId} is not in ${where}; pick a query id of its trajectories.jsonl`);
  // memory methods log every repair step (METHOD.md §5.7); memoryless ones write no file (or, in old runs, an empty one)
  if (run.retrievalLog === null || run.retrievalLog.length === 0) {
    throw new MeritError(`--example: ${where} is a memoryless run (no retrieval_log.jsonl records), so it retrieved no precedents; pass --reference with a memory method such as merit`);
  }
  if (t.initial_correct) throw new MeritError(`--example: query ${queryId} was initially correct in ${where}, so nothing was repaired; pick an initially failed query${failedHint(run)}`);
  const step = t.attempts.length - 1;
  if (step === 0) throw new MeritError(`--example: query ${queryId} has no repair step in ${where}; pick a query of a method that repairs`);
  const record = run.retrievalLog.find((r) => r.query_id === queryId && r.repair_iteration === step);
  if (record === undefined) throw new MeritError(`--example: ${where} retrieval_log.jsonl has no step ${step} of query ${queryId}; the run's files are incomplete (re-run it)`);
  const memory = new Map((run.memory ?? []).map((e) => [e.entry_id, e]));
  return {
    dataset: t.dataset,
    method: t.method,
    seed: t.stream_seed,
    queryId,
    dbId: t.db_id,
    question,
    step,
    attempts: t.attempts.length,
    failed: { sql: t.attempts[step - 1], status: t.statuses[step - 1], errorType: t.error_types[step - 1], dbError: t.db_errors[step - 1] === null ? null : userFacingDbError(t.db_errors[step - 1]) },
    retrieval: { legalPool: record.legal_pool_size, typedPool: record.typed_pool_size, fallback: record.fallback_used, typeFilter: record.type_filter_applied },
    precedents: precedents(record, memory),
    repair: { sql: t.attempts[step], status: t.statuses[step] },
  };
}

/**
 * A query worth drawing when none is chosen (`merit demo`): in stream order, the first initially
 * failed query whose last repair step retrieved a precedent, a repaired one first; null when none.
 */
export function defaultExampleQuery(run: RunInput): string | null {
  const retrieved = new Set((run.retrievalLog ?? []).filter((r) => r.retrieved_entry_ids.length > 0).map((r) => `${r.query_id}\u0000${r.repair_iteration}`));
  const candidates = [...run.trajectories]
    .sort((a, b) => a.stream_position - b.stream_position)
    .filter((t) => !t.initial_correct && t.attempts.length > 1 && retrieved.has(`${t.query_id}\u0000${t.attempts.length - 1}`));
  return (candidates.find((t) => t.final_correct) ?? candidates[0])?.query_id ?? null;
}

/** " (e.g. 3, 7, 12)": a few initially failed query ids of the run. */
function failedHint(run: RunInput): string {
  const ids = run.trajectories.filter((x) => !x.initial_correct && x.attempts.length > 1).slice(0, 3).map((x) => x.query_id);
  return ids.length > 0 ? ` (e.g. ${ids.join(", ")})` : "";
}

function precedents(r: RetrievalLogRecord, memory: Map<string, { source_query_id: string; attempted_sql_delta: string }>): Precedent[] {
  return r.retrieved_entry_ids.map((id, i) => {
    const entry = memory.get(id);
    return {
      polarity: r.retrieved_polarities[i],
      errorType: r.retrieved_error_types[i],
      sourceDb: r.source_db_ids[i],
      sourceQuery: entry?.source_query_id ?? null,
      score: r.final_scores[i],
      delta: entry?.attempted_sql_delta ?? null,
    };
  });
}

/** Texts around the figure: display names and the model lines (banner, model) under the title. */
export interface ExampleFigureText {
  dataset: string;
  method: string;
  subtitle: readonly string[];
}

const WIDTH = 960;
const PAD = 24;
const INNER = 14;
const SANS = "DejaVu Sans";
const MONO = "DejaVu Sans Mono";
/** Advance widths as fractions of the font size (DejaVu Sans Mono 0.602; DejaVu Sans at most ~0.62 on average text). */
const MONO_ADVANCE = 0.602;
const SANS_ADVANCE = 0.62;

interface Line {
  text: string;
  size: number;
  font: "sans" | "mono";
  weight?: "bold";
  fill?: string;
}

/** Figure 2 as an SVG document (deterministic for a given episode and text). */
export function exampleEpisodeSvg(e: ExampleEpisode, text: ExampleFigureText): string {
  const out: string[] = [];
  let y = PAD;
  const put = (l: Line, x: number) => {
    y += l.size * 1.35;
    const family = l.font === "mono" ? MONO : SANS;
    out.push(`<text x="${x}" y="${fmt(y)}" font-family="${family}" font-size="${l.size}"${l.weight ? ` font-weight="${l.weight}"` : ""} fill="${l.fill ?? "#222"}" xml:space="preserve">${xmlEscape(l.text)}</text>`);
  };
  const title = `Figure 2. One ${text.method} repair episode: ${text.dataset} query ${e.queryId} (${e.dbId}), stream order ${e.seed}`;
  for (const l of wrapLines(title, 16, "sans", 4)) put({ ...l, weight: "bold" }, PAD);
  for (const s of text.subtitle) for (const l of wrapLines(s, 11, "sans", 3)) put({ ...l, fill: "#555" }, PAD);
  y += 8;
  const panel = (heading: string, lines: Line[], stroke: string, arrow: boolean) => {
    if (arrow) {
      out.push(`<path d="M${WIDTH / 2} ${fmt(y + 2)} v14" stroke="#888" stroke-width="2"/><path d="M${WIDTH / 2 - 6} ${fmt(y + 12)} l6 8 l6 -8 z" fill="#888"/>`);
      y += 24;
    }
    const top = y;
    const box = out.push("") - 1; // the box is drawn once its height is known
    y += 4;
    put({ text: heading, size: 13, font: "sans", weight: "bold", fill: stroke }, PAD + INNER);
    for (const l of lines) put(l, PAD + INNER);
    y += 10;
    out[box] = `<rect x="${PAD}" y="${fmt(top)}" width="${WIDTH - 2 * PAD}" height="${fmt(y - top)}" rx="6" fill="#fafafa" stroke="${stroke}" stroke-width="1.5"/>`;
    y += 6;
  };
  panel("Question", e.question === null ? [{ text: "(not available: the run's dataset files were not found)", size: 12, font: "sans", fill: "#777" }] : wrapLines(e.question, 12, "sans", 6), "#555", false);
  const failedMeta = [`status ${e.failed.status}`, `type ${e.failed.errorType ?? "Result Mismatch (unclassified)"}`];
  panel(
    e.step === 1 ? "Failed initial attempt" : `Failed attempt ${e.step - 1} (repair step ${e.step} of ${e.attempts - 1})`,
    [...wrapLines(e.failed.sql, 12, "mono", 10), ...wrapLines(failedMeta.join(" · "), 12, "sans", 2, "#b03030"), ...(e.failed.dbError ? wrapLines(`DBMS: ${e.failed.dbError}`, 12, "mono", 3, "#b03030") : [])],
    "#b03030",
    true,
  );
  const pool = `legal pool ${e.retrieval.legalPool}, typed pool ${e.retrieval.typedPool}${e.retrieval.typeFilter ? ", type filter on" : ", no type filter"}${e.retrieval.fallback ? ", fallback used" : ""}`;
  const hits: Line[] =
    e.precedents.length === 0
      ? [{ text: "(nothing retrieved: no eligible entry in memory yet)", size: 12, font: "sans", fill: "#777" }]
      : e.precedents.flatMap((p, i) => {
          const head = `${i + 1}. ${p.polarity === "positive" ? "positive (a confirmed repair)" : "negative (an observed failure)"} · ${p.errorType} · from ${p.sourceDb}${p.sourceQuery === null ? "" : `, query ${p.sourceQuery}`} · score ${p.score.toFixed(3)}`;
          const fill = p.polarity === "positive" ? "#2a7a2a" : "#a05a00";
          return [...wrapLines(head, 12, "sans", 2, fill), ...(p.delta === null ? [{ text: "(entry not in the run's memory files)", size: 11, font: "sans" as const, fill: "#777" }] : deltaLines(p.delta))];
        });
  panel(`Retrieved precedents (${e.precedents.length}; ${pool})`, hits, "#3060a0", true);
  const correct = e.repair.status === "CORRECT";
  panel(
    `Repair (attempt ${e.step})`,
    [...wrapLines(e.repair.sql, 12, "mono", 10), ...wrapLines(`verdict: ${e.repair.status}${correct ? " (repaired)" : " (not repaired)"}`, 12, "sans", 1, correct ? "#2a7a2a" : "#b03030")],
    correct ? "#2a7a2a" : "#b03030",
    true,
  );
  put({ text: "Precedents show the memory entries as stored at the end of the run; every step of every episode is in the HTML explorer (--html).", size: 10, font: "sans", fill: "#777" }, PAD);
  const height = Math.ceil(y + PAD);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...out,
    "</svg>",
    "",
  ].join("\n");
}

/** An entry's `before => after` (METHOD.md §4.2) as two labelled blocks; any other text as it is. */
function deltaLines(delta: string): Line[] {
  const at = delta.indexOf(" => ");
  if (at < 0) return wrapLines(delta, 11, "mono", 4);
  const side = (sql: string) => (sql.trim() === "" ? "(empty SQL)" : sql);
  return [...wrapLines(`before: ${side(delta.slice(0, at))}`, 11, "mono", 3), ...wrapLines(`after:  ${side(delta.slice(at + 4))}`, 11, "mono", 3)];
}

/** `text` wrapped to the panel width at `size` (at most `maxLines`, the last one ending "…" when cut). */
export function wrapLines(text: string, size: number, font: "sans" | "mono", maxLines: number, fill?: string): Line[] {
  const width = WIDTH - 2 * PAD - 2 * INNER;
  const perLine = Math.max(10, Math.floor(width / (size * (font === "mono" ? MONO_ADVANCE : SANS_ADVANCE))));
  const lines = wrap(text, perLine);
  const shown = lines.length > maxLines ? [...lines.slice(0, maxLines - 1), `${lines[maxLines - 1].slice(0, perLine - 1)}…`] : lines;
  return shown.map((t) => ({ text: t, size, font, ...(fill ? { fill } : {}) }));
}

/** Greedy word wrap to `width` characters; words longer than a line are cut; blank lines kept. */
export function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const para of text.replace(/\t/g, "  ").replace(/\r\n?/g, "\n").split("\n")) {
    let line = "";
    for (const word of para.split(/ +/).filter((w) => w !== "")) {
      let w = word;
      while (w.length > width) {
        if (line !== "") out.push(line);
        out.push(w.slice(0, width));
        w = w.slice(width);
        line = "";
      }
      if (line === "") line = w;
      else if (line.length + 1 + w.length <= width) line += ` ${w}`;
      else {
        out.push(line);
        line = w;
      }
    }
    out.push(line);
  }
  while (out.length > 1 && out[out.length - 1] === "") out.pop();
  return out;
}

/** XML text escape; characters XML 1.0 forbids (C0 controls but tab/newline) become U+FFFD. */
export function xmlEscape(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!);
}

const fmt = (x: number) => (Math.round(x * 10) / 10).toString();

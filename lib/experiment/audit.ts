/**
 * Experiment runs, the causal audit (paper §3.1; METHOD.md §4.7): re-reads a finished run directory
 * and checks every logged prompt and retrieval —
 *  1. `gold-sql`: no prompt contains its query's gold SQL (whitespace-normalised, case-insensitive)
 *     once the model-authored SQL it may legitimately show is masked out — the attempts of this
 *     episode made before the prompt, and any attempt of an earlier episode (via memory). Such SQL can
 *     equal this question's gold (Spider dev has many questions with identical gold SQL) or contain it;
 *  2. `gold-rows`: no prompt contains its query's gold result rows (as the oracle would serialise them);
 *  3. `future-memory`: every retrieved entry comes from a strictly earlier stream position;
 *  4. `own-query`: no retrieved entry comes from the current query, and every `Entry ID:` (or a memory
 *     hook's `Note ID:`) shown in a prompt was retrieved at that step (nothing reaches a prompt around
 *     the retriever);
 *  4b. `unknown-memory-item` and `future-memory` again, one check for both memories, not trusting the
 *     log's positions: every retrieved id is an item of the run's own memory — a MERIT entry of its
 *     memory/ files or a note of its trajectories' `memory_writes` (or of its declared source) — that
 *     came into the memory strictly before the retrieving episode (an entry: its earliest observation;
 *     a note: the episode that wrote it);
 *  5. `gold-in-memory`: no note a method's memory hook wrote (trajectory `memory_writes`) contains
 *     its source query's gold SQL, once model-authored SQL is masked as in check 1 — a plugin's
 *     LLM-written memory is checked like the kit's own prompts;
 *  6. `revision` and `retired-note`: a memory hook's revisions (audit-revisions.ts) — every note it
 *     supersedes or retires was in force and visible to the revising episode, and no retrieval picks
 *     a note retired at an earlier position;
 *  7. `memory-source`: a run shown another run's memory (config memory_source) — the source is still
 *     the complete run it used (same trajectories_sha256), and no source note it retrieved was written
 *     about a query of its own stream (memory-source.ts).
 * A clean causal run has 0 violations; `transductive_batch` is expected to have some. Before any check
 * the directory must be complete (lib/experiment/completeness.ts): a truncated, duplicated or mixed
 * run is refused with one line rather than audited.
 * @module
 */
import { existsSync } from "node:fs";
import type { Dataset } from "../data/types.ts";
import { InputFileError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { auditRevisions } from "./audit-revisions.ts";
import { auditMemorySource, type MemorySourceRecord } from "./memory-source.ts";
import { checkRunComplete } from "./completeness.ts";
import { loadDataset } from "../data/index.ts";
import { Oracle } from "../oracle/oracle.ts";
import { executorOf, parseConfig } from "./config.ts";
import { readMemoryEntries, readPrompts, readRetrievalLog, readRunJson, readTrajectories, RUN_FILES, runFile } from "./run-dir.ts";

export type ViolationKind = "gold-sql" | "gold-rows" | "future-memory" | "own-query" | "unretrieved-entry" | "unknown-memory-item" | "gold-in-memory" | "revision" | "retired-note" | "memory-source";

export interface Violation {
  kind: ViolationKind;
  queryId: string;
  streamPosition: number;
  detail: string;
}

export interface AuditReport {
  prompts: number;
  retrievals: number;
  violations: Violation[];
}

/** Gold rows as compact JSON with integers unquoted and blobs as hex: how a leak would print them. */
function rowsJson(rows: unknown[][]): string {
  return canonicalJson(rows.map((r) => r.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v))) as JsonValue);
}

const normalize = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * Audits `runDir`. `goldRows` optionally maps a query id to its gold rows (JSON-serialisable) for
 * check 2; without it only the textual checks run.
 */
export function auditRun(runDir: string, dataset: Dataset, goldRows?: ReadonlyMap<string, unknown[][]>): AuditReport {
  if (!existsSync(runFile(runDir, "trajectories"))) throw new InputFileError(runDir, `is not a run directory (no ${RUN_FILES.trajectories})`, "pass a directory written by `merit run`");
  const trajectories: Trajectory[] = checkRunComplete(runDir);
  const damaged = "the run directory is damaged; re-run or resume it";
  const prompts = readPrompts(runDir, damaged);
  const retrievals = readRetrievalLog(runDir, damaged) ?? [];
  const byQuery = new Map(dataset.examples.map((e) => [e.id, e]));
  const position = new Map(trajectories.map((t) => [t.query_id, t.stream_position]));
  const byPosition = [...trajectories].sort((a, b) => a.stream_position - b.stream_position);
  const ownAttempts = new Map(trajectories.map((t) => [t.query_id, t.attempts.map(normalize)]));
  /** Model-authored SQL a prompt at `pos` may show, longest first (a longer one masks first). */
  const allowedSql = (queryId: string, pos: number, repairsSeen: number): string[] => {
    const earlier = byPosition.filter((t) => t.stream_position < pos).flatMap((t) => t.attempts.map(normalize));
    const own = (ownAttempts.get(queryId) ?? []).slice(0, repairsSeen + 1);
    return [...new Set([...earlier, ...own].filter((a) => a.length > 0))].sort((a, b) => b.length - a.length);
  };
  const violations: Violation[] = [];

  // A read-only memory from another run (config memory_source): checked against that run; its notes'
  // positions are that run's, so the position checks below leave them to it.
  const recorded = (readRunJson(runDir, "manifest", { missing: "is missing or not JSON", invalid: "is missing or not JSON", fix: damaged }) as { memory_source?: MemorySourceRecord }).memory_source;
  const source = auditMemorySource(recorded, trajectories, retrievals);
  violations.push(...source.violations);

  // When each item of the run's memory came into it, whichever memory it is: a MERIT entry at its
  // earliest observation (a merge keeps the id and may carry a later representative), a note at the
  // episode that wrote it.
  const cameIn = new Map<string, number>();
  const seen = (id: string, at: number) => cameIn.set(id, Math.min(cameIn.get(id) ?? Infinity, at));
  for (const e of readMemoryEntries(runDir, damaged) ?? []) seen(e.entry_id, Math.min(e.source_stream_position, ...e.provenance_history.map((o) => o.source_stream_position)));
  for (const t of trajectories) for (const n of t.memory_writes ?? []) seen(n.note_id, t.stream_position);

  // Retrievals, grouped per (query, step) for the prompt cross-check.
  const retrievedAt = new Map<string, Set<string>>();
  for (const r of retrievals) {
    const pos = position.get(r.query_id) ?? -1;
    retrievedAt.set(`${r.query_id}#${r.repair_iteration}`, new Set(r.retrieved_entry_ids));
    r.source_stream_positions.forEach((src, i) => {
      const id = r.retrieved_entry_ids[i];
      if (source.sourceIds.has(id)) return;
      if (src >= pos) violations.push({ kind: src === pos ? "own-query" : "future-memory", queryId: r.query_id, streamPosition: pos, detail: `step ${r.repair_iteration} retrieved entry ${id} from stream position ${src}` });
      else {
        const came = cameIn.get(id);
        if (came === undefined) violations.push({ kind: "unknown-memory-item", queryId: r.query_id, streamPosition: pos, detail: `step ${r.repair_iteration} retrieved ${id}, which is in neither the run's memory files nor its trajectories' notes` });
        else if (came >= pos) violations.push({ kind: "future-memory", queryId: r.query_id, streamPosition: pos, detail: `step ${r.repair_iteration} retrieved ${id}, which came into the memory at stream position ${came} (the retrieval log says ${src})` });
      }
    });
  }

  const repairIndex = new Map<string, number>();
  for (const p of prompts) {
    const example = byQuery.get(p.query_id);
    if (!example) throw new InputFileError(runFile(runDir, "prompts"), `query ${p.query_id} is not in the dataset`, "audit the run against the dataset it was made with");
    const repairsSeen = repairIndex.get(p.query_id) ?? 0;
    let text = normalize(p.prompt);
    const gold = normalize(example.goldSql.replace(/;\s*$/, ""));
    if (gold.length > 0 && text.includes(gold)) {
      for (const sql of allowedSql(p.query_id, p.stream_position, repairsSeen)) if (text.includes(sql)) text = text.split(sql).join(" \u0000 ");
    }
    if (gold.length > 0 && text.includes(gold)) {
      violations.push({ kind: "gold-sql", queryId: p.query_id, streamPosition: p.stream_position, detail: `a ${p.kind} prompt contains the gold SQL` });
    }
    const rows = goldRows?.get(p.query_id);
    if (rows && rows.length > 0 && p.prompt.includes(rowsJson(rows))) {
      violations.push({ kind: "gold-rows", queryId: p.query_id, streamPosition: p.stream_position, detail: `a ${p.kind} prompt contains the gold result rows` });
    }
    if (p.kind === "repair") {
      const step = (repairIndex.get(p.query_id) ?? 0) + 1;
      repairIndex.set(p.query_id, step);
      const allowed = retrievedAt.get(`${p.query_id}#${step}`) ?? new Set<string>();
      for (const m of p.prompt.matchAll(/^(?:Entry|Note) ID: (\S+)$/gm)) {
        if (!allowed.has(m[1])) violations.push({ kind: "unretrieved-entry", queryId: p.query_id, streamPosition: p.stream_position, detail: `repair ${step} shows entry ${m[1]} that its retrieval did not return` });
      }
    }
  }
  // Notes a memory hook wrote: the gold SQL of their own query (beyond model-authored SQL) is a leak.
  for (const t of trajectories) {
    const example = byQuery.get(t.query_id);
    const gold = example ? normalize(example.goldSql.replace(/;\s*$/, "")) : "";
    if (gold.length === 0) continue;
    for (const note of t.memory_writes ?? []) {
      let text = normalize(`${note.text} ${note.key} ${canonicalJson(note.data)}`);
      if (!text.includes(gold)) continue;
      for (const sql of allowedSql(t.query_id, t.stream_position, t.repair_steps)) if (text.includes(sql)) text = text.split(sql).join(" \u0000 ");
      if (text.includes(gold)) violations.push({ kind: "gold-in-memory", queryId: t.query_id, streamPosition: t.stream_position, detail: `memory note ${note.note_id} (${note.kind}) contains the gold SQL` });
    }
  }
  violations.push(...auditRevisions(trajectories, retrievals));
  return { prompts: prompts.length, retrievals: retrievals.length, violations };
}

/**
 * The causal audit of a run directory as `merit audit` runs it: the run's config and dataset, the
 * gold rows of every query it holds (through the oracle), then `auditRun`. Load the run's plugins first.
 */
export async function auditRunDir(runDir: string): Promise<AuditReport> {
  const configPath = runFile(runDir, "config");
  const spec = readRunJson(runDir, "config", { missing: "missing or not JSON", invalid: "missing or not JSON", fix: "pass a directory written by `merit run`" }) as { config: unknown };
  const config = parseConfig(spec.config, configPath);
  const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
  const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, engine: executorOf(config) });
  try {
    const queried = new Set(readTrajectories(runDir, "pass a directory written by `merit run`").map((t) => t.query_id));
    const goldRows = new Map<string, unknown[][]>();
    for (const example of dataset.examples) {
      if (!queried.has(example.id)) continue;
      const rows = await oracle.goldRows(example);
      if (rows) goldRows.set(example.id, rows);
    }
    return auditRun(runDir, dataset, goldRows);
  } finally {
    await oracle.close();
  }
}

/** An audit's violations as lines (the first 50, then how many more), ending with `violations N`. */
export function auditLines(report: AuditReport): string[] {
  const lines = report.violations.slice(0, 50).map((v) => `${v.kind}\tquery ${v.queryId}\tposition ${v.streamPosition}\t${v.detail}`);
  if (report.violations.length > 50) lines.push(`... and ${report.violations.length - 50} more`);
  lines.push(`violations ${report.violations.length}`);
  return lines;
}

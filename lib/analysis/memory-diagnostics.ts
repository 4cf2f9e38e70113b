/**
 * Analysis stage, memory diagnostics (METHOD.md §9; issue "The peers on the same stream" §2): for
 * every memory method — MERIT's entry memories (memory/ files) and memory hooks' notes (trajectory
 * `memory_writes`) alike — the memory's size over the stream, and a retrieval utility table that
 * says, per polarity and kind of the retrieved item, how often the repair it preceded succeeded, so
 * the dual-polarity claim can be checked for each peer. `merit report --diagnostics` writes both.
 *
 * Definitions (pooled over the stream seeds of one (dataset, method); a method is a memory method
 * when its runs have a memory/ folder, a trajectory with `memory_writes`, or a retrieval_log.jsonl
 * record):
 *
 * - **Memory size** after e finished episodes: entries born at a stream position < e (an entry's
 *   birth is the earliest `source_stream_position` of it and its provenance, run-directory.ts
 *   readEntryBirths) plus hook notes written by the episodes at positions < e (the `memory_writes`
 *   committed before position e) less the notes retired or superseded by those episodes
 *   (`memory_retires`): the notes in force, per polarity, mean over seeds.
 * - **Repair step** (t, s): step s = 1..repair_steps of trajectory t; its attempt is attempts[s], the
 *   one generated right after the step's retrieval (retrieval_log.jsonl record with query_id and
 *   repair_iteration = s). A step is **step-correct** when the oracle scores attempts[s] correct
 *   (`feedback.oracle_correct[s]`, or `statuses[s] === "CORRECT"` under the oracle regime, which
 *   carries no `feedback`), **accepted** when the run's feedback accepted it (`statuses[s] ===
 *   "CORRECT"`), and **episode-correct** when its episode eventually succeeded (`final_correct`: the
 *   last attempt, at this step or a later one, is oracle-correct).
 * - **Group** (polarity, kind): kind is the retrieved item's `retrieved_error_types` entry — the
 *   entry's error type for MERIT entries, the note's kind for hook notes — and polarity its
 *   `retrieved_polarities` entry. Retrievals = retrieved items of the group (a step retrieving two
 *   counts 2); steps = distinct repair steps that retrieved at least one item of the group; the
 *   shares are over those steps. The group `none`/`none` holds the steps that retrieved nothing.
 * - **Base rate** of a group: the same shares over the other repair steps of the (dataset, method),
 *   those that retrieved no item of the group.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { InputFileError } from "../errors.ts";
import { readRetrievalLog, readTrajectories, RUN_FILES, runFile } from "../experiment/run-dir.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { formatCsv } from "./csv.ts";
import { memoryGrowth, memoryGrowthFigure, type ItemPolarity, type RunMemory } from "./memory-growth.ts";
import { fixed, MISSING } from "./number-format.ts";
import { readEntryBirths, type EntryBirth } from "./run-directory.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

/** What the diagnostics read from one run directory. */
export interface RunDiagnostics {
  dataset: string;
  method: string;
  stream_seed: number;
  /** Where the run was read from (for error messages); "" for hand-made inputs. */
  dir?: string;
  trajectories: readonly Trajectory[];
  /** retrieval_log.jsonl ([] when the run wrote none). */
  retrievalLog: readonly RetrievalLogRecord[];
  /** memory/ entry births, or null when the run has no memory/ folder. */
  entryBirths: readonly EntryBirth[] | null;
}

/** The group of the steps that retrieved nothing. */
export const NO_RETRIEVAL = "none";

/** Whether a run belongs to a memory method (memory/ folder, hook notes or retrieval records). */
export function isMemoryRun(r: RunDiagnostics): boolean {
  return r.entryBirths !== null || r.retrievalLog.length > 0 || r.trajectories.some((t) => t.memory_writes !== undefined);
}

/** Reads the diagnostics inputs of a run directory; null for a memoryless run. */
export function readRunDiagnostics(dir: string): RunDiagnostics | null {
  const trajectories = readTrajectories(dir);
  if (trajectories.length === 0) return null;
  const { dataset, method, stream_seed } = trajectories[0];
  const run: RunDiagnostics = { dataset, method, stream_seed, dir, trajectories, retrievalLog: readRetrievalLog(dir) ?? [], entryBirths: readEntryBirths(dir) };
  return isMemoryRun(run) ? run : null;
}

/** The memory of a run as births: its entries' and its hook notes'. */
export function runMemorySize(r: RunDiagnostics): RunMemory {
  const notes = r.trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => ({ polarity: n.polarity as ItemPolarity, position: t.stream_position })));
  // Notes in force: a retired or superseded note leaves once its revising episode finished.
  const polarityOf = new Map(r.trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => [n.note_id, n.polarity as ItemPolarity] as const)));
  const deaths = r.trajectories.flatMap((t) => (t.memory_retires ?? []).flatMap((id) => (polarityOf.has(id) ? [{ polarity: polarityOf.get(id)!, position: t.stream_position }] : [])));
  return { dataset: r.dataset, method: r.method, stream_seed: r.stream_seed, stream_length: r.trajectories.length, births: [...(r.entryBirths ?? []), ...notes], ...(deaths.length > 0 ? { deaths } : {}) };
}

/** Memory size figure: entries and notes in memory vs finished episodes, every memory method. */
export function memorySizeFigure(runs: readonly RunDiagnostics[], sel: TableSelection = {}): TopLevelSpec {
  return memoryGrowthFigure(runs.filter(isMemoryRun).map((r) => runMemorySize(r)), sel, { title: "Memory size over the stream (entries and notes in force, mean over seeds)", y: "Items in memory" });
}

/** The memory size curves as CSV: dataset, method, polarity, episodes, items (mean over seeds). */
export function memorySizeCsv(runs: readonly RunDiagnostics[], sel: TableSelection = {}): string {
  const points = memoryGrowth(runs.filter(isMemoryRun).map((r) => runMemorySize(r)), sel);
  return formatCsv([["dataset", "method", "polarity", "episodes", "items"], ...points.map((p) => [p.dataset, p.method, p.polarity, String(p.episodes), fixed(p.entries, 4)])]);
}

/** One row of the utility table (shares in [0, 1], null over no steps). */
export interface UtilityRow {
  dataset: string;
  method: string;
  polarity: string;
  kind: string;
  retrievals: number;
  steps: number;
  step_correct: number | null;
  step_accepted: number | null;
  episode_correct: number | null;
  base_steps: number;
  base_step_correct: number | null;
  base_step_accepted: number | null;
  base_episode_correct: number | null;
}

interface Step {
  correct: boolean;
  accepted: boolean;
  episodeCorrect: boolean;
}

const share = (steps: readonly Step[], f: (s: Step) => boolean): number | null => (steps.length === 0 ? null : steps.filter(f).length / steps.length);

/**
 * The utility rows, one per (dataset, method, polarity, kind) in first-seen (dataset, method) order,
 * groups sorted by polarity (positive, negative, neutral, others, none) then kind. Throws when a run's
 * retrieval log names a step its trajectories lack, or a step retrieved entries the log does not hold.
 */
export function retrievalUtility(runs: readonly RunDiagnostics[]): UtilityRow[] {
  const cells = new Map<string, { dataset: string; method: string; steps: Step[]; groups: Map<string, { polarity: string; kind: string; retrievals: number; steps: Set<number> }> }>();
  for (const r of runs.filter(isMemoryRun)) {
    const key = `${r.dataset}\u0000${r.method}`;
    if (!cells.has(key)) cells.set(key, { dataset: r.dataset, method: r.method, steps: [], groups: new Map() });
    const cell = cells.get(key)!;
    const where = r.dir ? runFile(r.dir, "retrievalLog") : `${RUN_FILES.retrievalLog} of ${r.method} seed ${r.stream_seed}`;
    const records = new Map<string, RetrievalLogRecord>();
    for (const rec of r.retrievalLog) {
      const id = `${rec.query_id}\u0000${rec.repair_iteration}`;
      if (records.has(id)) throw new InputFileError(where, `holds two records of query ${rec.query_id}, repair step ${rec.repair_iteration}`, "re-run the run");
      records.set(id, rec);
    }
    const seen = new Set<string>();
    for (const t of r.trajectories) {
      if (seen.has(t.query_id)) throw new InputFileError(where, `its run holds query ${t.query_id} twice`, "re-run the run");
      seen.add(t.query_id);
      for (let s = 1; s <= t.repair_steps; s++) {
        const index = cell.steps.length;
        cell.steps.push({ correct: t.feedback ? t.feedback.oracle_correct[s] : t.statuses[s] === "CORRECT", accepted: t.statuses[s] === "CORRECT", episodeCorrect: t.final_correct });
        const rec = records.get(`${t.query_id}\u0000${s}`);
        records.delete(`${t.query_id}\u0000${s}`);
        const ids = rec?.retrieved_entry_ids ?? [];
        if (rec === undefined && t.retrieved_entry_ids[s - 1].length > 0) throw new InputFileError(where, `has no record of query ${t.query_id}, repair step ${s}, which retrieved ${t.retrieved_entry_ids[s - 1].join(", ")}`, "restore the run's retrieval_log.jsonl or re-run it");
        const items = ids.length === 0 ? [{ polarity: NO_RETRIEVAL, kind: NO_RETRIEVAL }] : ids.map((_, i) => ({ polarity: rec!.retrieved_polarities[i], kind: rec!.retrieved_error_types[i] }));
        for (const item of items) {
          if (item.polarity === undefined || item.kind === undefined) throw new InputFileError(where, `record of query ${t.query_id}, repair step ${s} lacks polarities or error types for its retrieved entries`, "re-run the run");
          const g = `${item.polarity}\u0000${item.kind}`;
          if (!cell.groups.has(g)) cell.groups.set(g, { ...item, retrievals: 0, steps: new Set() });
          const group = cell.groups.get(g)!;
          if (ids.length > 0) group.retrievals += 1;
          group.steps.add(index);
        }
      }
    }
    const left = [...records.values()][0];
    if (left !== undefined) throw new InputFileError(where, `has a record of query ${left.query_id}, repair step ${left.repair_iteration}, which its trajectories do not hold`, "keep each run's files together, or re-run it");
  }
  const rank = (p: string) => ({ positive: 0, negative: 1, neutral: 2, [NO_RETRIEVAL]: 4 })[p] ?? 3;
  const rows: UtilityRow[] = [];
  for (const cell of cells.values()) {
    const groups = [...cell.groups.values()].sort((x, y) => rank(x.polarity) - rank(y.polarity) || cmp(x.polarity, y.polarity) || cmp(x.kind, y.kind));
    for (const g of groups) {
      const inside = [...g.steps].map((i) => cell.steps[i]);
      const outside = cell.steps.filter((_, i) => !g.steps.has(i));
      rows.push({
        dataset: cell.dataset,
        method: cell.method,
        polarity: g.polarity,
        kind: g.kind,
        retrievals: g.retrievals,
        steps: inside.length,
        step_correct: share(inside, (s) => s.correct),
        step_accepted: share(inside, (s) => s.accepted),
        episode_correct: share(inside, (s) => s.episodeCorrect),
        base_steps: outside.length,
        base_step_correct: share(outside, (s) => s.correct),
        base_step_accepted: share(outside, (s) => s.accepted),
        base_episode_correct: share(outside, (s) => s.episodeCorrect),
      });
    }
  }
  return rows;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The retrieval utility table (percentages, one decimal); null when no run is a memory method's. */
export function memoryUtilityTable(runs: readonly RunDiagnostics[], sel: TableSelection = {}): Table | null {
  const all = retrievalUtility(runs);
  if (all.length === 0) return null;
  // datasets and methods in the selection's order when it names them, else first seen
  const order = (names: string[], chosen?: string[]) => (chosen ? [...chosen.filter((n) => names.includes(n)), ...names.filter((n) => !chosen.includes(n))] : names);
  const datasets = order([...new Set(all.map((r) => r.dataset))], sel.datasets);
  const methods = order([...new Set(all.map((r) => r.method))], sel.methods);
  const rows = datasets.flatMap((d) => methods.flatMap((m) => all.filter((r) => r.dataset === d && r.method === m)));
  const pct = (x: number | null): Cell => ({ text: x === null ? MISSING : fixed(100 * x, 1) });
  return {
    id: "memory-utility",
    title: "Retrieval utility: repair success after a retrieved memory item, by polarity and kind (%)",
    columns: ["Dataset", "Method", "Polarity", "Kind", "Retrievals", "Steps", "Step correct", "Episode correct", "Base steps", "Base step correct", "Base episode correct", "Step accepted", "Base step accepted"],
    align: ["l", "l", "l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    rows: rows.map((r) => [
      { text: displayName(r.dataset, sel) },
      { text: displayName(r.method, sel) },
      { text: r.polarity },
      { text: r.kind },
      { text: String(r.retrievals) },
      { text: String(r.steps) },
      pct(r.step_correct),
      pct(r.episode_correct),
      { text: String(r.base_steps) },
      pct(r.base_step_correct),
      pct(r.base_episode_correct),
      pct(r.step_accepted),
      pct(r.base_step_accepted),
    ]),
    notes: [
      "Pooled over stream seeds. Kind: the retrieved entry's error type (MERIT entries) or the note's kind (memory hooks); none/none = repair steps that retrieved nothing. Retrievals: retrieved items of the group; Steps: repair steps that retrieved at least one.",
      "Step correct: share of those steps whose repair attempt (the one right after the retrieval) the oracle scores correct; Episode correct: share whose episode finally succeeded. Base: the same over the method's other repair steps (no item of the group retrieved). The CSV adds the shares the feedback accepted. METHOD.md §9.",
    ],
    data: rows.map((r) => ({ ...r }) as unknown as Record<string, DataValue>),
    csvOnly: [11, 12],
    rulesBefore: rows.flatMap((r, i) => (i > 0 && (rows[i - 1].dataset !== r.dataset || rows[i - 1].method !== r.method) ? [i] : [])),
  };
}

/**
 * The peers demo on the simulated engine (`make demo-peers`), its closing note: per method, what its
 * memory did and what the engine answered its calls — notes written and notes retrieved, calls by
 * kind, hook answers drawn well formed / truncated / malformed, answers cut at the output limit, and the
 * judge's agreement with the truth. The engine is deterministic from (seed, prompt), so each recorded
 * prompt (prompts.jsonl) is answered again here exactly as the run was answered, with the truth the
 * engine knew.
 * @module
 */
import { readMemoryEntries, readPrompts, readRetrievalLog, readTrajectories } from "../experiment/run-dir.ts";
import { atLimit, type SimulatedBackend } from "../llm/engines/simulated.ts";

/** One method's counts over its runs (stream orders). */
export interface SimulatedCounts {
  method: string;
  runs: number;
  /** Memory items written: MERIT's entries, a hook method's notes (trajectory memory_writes). */
  notesWritten: number;
  /** Items placed in repair prompts (retrieval_log.jsonl), over every repair step. */
  notesRetrieved: number;
  /** LLM calls by kind (prompts.jsonl), the initial cache's excluded. */
  calls: Record<string, number>;
  /** Hook calls (distill, curate, synthesize, induce, critique) by the answer the engine drew. */
  hookForms: { well_formed: number; truncated: number; malformed: number };
  /** Answers that ran to the output limit (drawn truncations and answers longer than the limit). */
  cutAtLimit: number;
  /** Judge calls and those whose verdict matched the truth. */
  judged: number;
  judgeAgreed: number;
}

/** The counts of `dirs` (run directories of one dataset) per method, in first-seen order; `maxOutputTokens` is the runs' output limit. */
export function simulatedCounts(dirs: readonly string[], methodOf: (dir: string) => string, engine: SimulatedBackend, maxOutputTokens: number): SimulatedCounts[] {
  const byMethod = new Map<string, SimulatedCounts>();
  for (const dir of dirs) {
    const method = methodOf(dir);
    let c = byMethod.get(method);
    if (c === undefined) {
      c = { method, runs: 0, notesWritten: 0, notesRetrieved: 0, calls: {}, hookForms: { well_formed: 0, truncated: 0, malformed: 0 }, cutAtLimit: 0, judged: 0, judgeAgreed: 0 };
      byMethod.set(method, c);
    }
    c.runs += 1;
    const trajectories = readTrajectories(dir);
    c.notesWritten += trajectories.reduce((n, t) => n + (t.memory_writes?.length ?? 0), 0) + (readMemoryEntries(dir)?.length ?? 0);
    c.notesRetrieved += (readRetrievalLog(dir) ?? []).reduce((n, r) => n + r.retrieved_entry_ids.length, 0);
    for (const p of readPrompts(dir)) {
      if (p.kind === "initial_cache") continue;
      c.calls[p.kind] = (c.calls[p.kind] ?? 0) + 1;
      const r = engine.respond(p.prompt);
      if (r.form !== undefined) c.hookForms[r.form] += 1;
      if (atLimit(r, maxOutputTokens).cut) c.cutAtLimit += 1;
      if (r.verdict !== undefined) {
        c.judged += 1;
        if (r.verdict === r.correct) c.judgeAgreed += 1;
      }
    }
  }
  return [...byMethod.values()];
}

/** The counts as table rows: method, runs, notes written, retrieved, calls by kind, hook answers, cut, judge agreement. */
export function simulatedCountRows(counts: readonly SimulatedCounts[]): { header: string[]; rows: string[][] } {
  const header = ["method", "runs", "notes written", "notes retrieved", "calls by kind", "hook answers (well formed / truncated / malformed)", "cut at output limit", "judge agreement"];
  const rows = counts.map((c) => {
    const kinds = Object.entries(c.calls)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    const hooks = c.hookForms.well_formed + c.hookForms.truncated + c.hookForms.malformed;
    return [
      c.method,
      String(c.runs),
      String(c.notesWritten),
      String(c.notesRetrieved),
      kinds || "-",
      hooks === 0 ? "-" : `${c.hookForms.well_formed} / ${c.hookForms.truncated} / ${c.hookForms.malformed}`,
      String(c.cutAtLimit),
      c.judged === 0 ? "-" : `${c.judgeAgreed}/${c.judged} (${((100 * c.judgeAgreed) / c.judged).toFixed(1)}%)`,
    ];
  });
  return { header, rows };
}

/**
 * Experiment runs, a memory from another run (issue 36 §6; METHOD.md §12.4): config `memory_source`
 * names a finished run directory (transfer: a memory built on Spider shown to a Spider-DK or BIRD
 * run). Its memory hook's notes in force at its end join this run's memory **read-only**: eligible at
 * every stream position, never revised by this run's writes (a write that supersedes or retires one
 * is refused), never stored in this run's trajectories. A source note written about a query of this
 * run's stream (same dataset, same query id) is never shown: it would carry the feedback of a query
 * this run has not reached. The source is part of the run's identity: the config names its path and
 * manifest.json `memory_source` records its method, dataset, trajectories_sha256 and note counts, so a
 * resume with a changed source is refused; `merit audit` checks the source again (audit.ts).
 * @module
 */
import { resolve } from "node:path";
import { MeritError } from "../errors.ts";
import { isEntryMemory } from "../methods/merit-memory.ts";
import type { HooksRecord, Note } from "../methods/hooks.ts";
import type { MethodSpec } from "../methods/index.ts";
import { checkRunComplete } from "./completeness.ts";
import { readRunJson } from "./run-dir.ts";

/** What manifest.json records of a run's memory source. */
export interface MemorySourceRecord {
  /** As the config names it. */
  path: string;
  method: string;
  dataset: string;
  trajectories_sha256: string;
  /** Notes in force at the source run's end. */
  notes_in_force: number;
  /** Of those, the notes this run may be shown (none written about a query of its stream). */
  notes_shown: number;
}

/**
 * The notes a run may be shown from `path` and their record. Refuses in one line a source that is not
 * a completed run, whose method has no memory hook or another one than `method`'s, or whose files
 * changed since it completed.
 */
export function readMemorySource(path: string, method: MethodSpec, dataset: string, streamIds: ReadonlySet<string>): { record: MemorySourceRecord; notes: Note[] } {
  const fail = (what: string) => new MeritError(`config memory_source ${path}: ${what}`);
  const hook = method.hooks.memory;
  if (!hook) throw fail(`method ${method.name} has no memory hook to show a source memory to; leave memory_source out or run a method with a memory hook`);
  if (isEntryMemory(hook)) throw fail(`method ${method.name} keeps MERIT's entry memory, which reads no source memory (only a note memory does: a peer's or a plugin's); leave memory_source out or run a method with a note memory`);
  const manifest = readRunJson(resolve(path), "manifest", { missing: "is missing or not JSON", invalid: "is missing or not JSON", fix: "name a run directory written by `merit run`" }) as { status?: string; method?: string; method_parts?: { hooks?: HooksRecord }; trajectories_sha256?: string; dataset?: { name?: string } };
  if (manifest.status !== "completed") throw fail("is not a completed run; finish it (merit run --resume) before using its memory");
  const trajectories = checkRunComplete(resolve(path));
  const sourceHook = manifest.method_parts?.hooks?.memory?.name;
  if (sourceHook !== hook.name) throw fail(`was written by ${sourceHook === undefined ? "a method without a memory hook" : `memory hook "${sourceHook}"`} (method ${manifest.method}), not "${hook.name}" of method ${method.name}; a source memory's notes must be the same hook's`);
  // The notes in force at its end: its writes and retirements replayed in stream order.
  const inForce = new Map<string, Note>();
  for (const t of [...trajectories].sort((a, b) => a.stream_position - b.stream_position)) {
    for (const id of t.memory_retires ?? []) inForce.delete(id);
    for (const n of t.memory_writes ?? []) inForce.set(n.note_id, n);
  }
  const sourceDataset = trajectories[0]?.dataset ?? manifest.dataset?.name ?? "";
  const notes = [...inForce.values()].filter((n) => !(sourceDataset === dataset && streamIds.has(n.source_query_id)));
  return {
    record: { path, method: manifest.method ?? "", dataset: sourceDataset, trajectories_sha256: manifest.trajectories_sha256 ?? "", notes_in_force: inForce.size, notes_shown: notes.length },
    notes,
  };
}

/** One finding of the source check, in the shape of the causal audit's violations. */
export interface SourceViolation {
  kind: "memory-source";
  queryId: string;
  streamPosition: number;
  detail: string;
}

/**
 * `merit audit`'s check of a run's memory source (manifest.json `memory_source`; none: nothing to
 * check): the source run is still complete with the trajectories it had when the run used it, and
 * every retrieved note that is not the run's own is a note in force at the source's end, not written
 * about a query of this run (same dataset). Returns the findings and the source's note ids, which the
 * audit's position checks leave to this one (their positions are the source run's).
 */
export function auditMemorySource(record: MemorySourceRecord | undefined, trajectories: readonly { query_id: string; stream_position: number; dataset: string; memory_writes?: readonly Note[] }[], retrievals: readonly { query_id: string; repair_iteration: number; retrieved_entry_ids: readonly string[] }[]): { violations: SourceViolation[]; sourceIds: ReadonlySet<string> } {
  if (record === undefined) return { violations: [], sourceIds: new Set() };
  const violations: SourceViolation[] = [];
  const at = { queryId: "-", streamPosition: -1 };
  let source: ReturnType<typeof checkRunComplete>;
  try {
    source = checkRunComplete(resolve(record.path));
  } catch (error) {
    violations.push({ kind: "memory-source", ...at, detail: `the source run ${record.path} cannot be read as a complete run (${(error as Error).message})` });
    return { violations, sourceIds: new Set() };
  }
  const manifest = readRunJson(resolve(record.path), "manifest", { missing: "is missing or not JSON", invalid: "is missing or not JSON", fix: "restore the source run" }) as { trajectories_sha256?: string };
  if (manifest.trajectories_sha256 !== record.trajectories_sha256) violations.push({ kind: "memory-source", ...at, detail: `the source run ${record.path} has trajectories_sha256 ${manifest.trajectories_sha256} but the run used ${record.trajectories_sha256}` });
  const inForce = new Map<string, Note>();
  for (const t of [...source].sort((a, b) => a.stream_position - b.stream_position)) {
    for (const id of t.memory_retires ?? []) inForce.delete(id);
    for (const n of t.memory_writes ?? []) inForce.set(n.note_id, n);
  }
  const own = new Set(trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => n.note_id)));
  const streamIds = new Set(trajectories.map((t) => t.query_id));
  const position = new Map(trajectories.map((t) => [t.query_id, t.stream_position]));
  const sameDataset = trajectories[0]?.dataset === record.dataset;
  for (const r of retrievals) {
    for (const id of r.retrieved_entry_ids) {
      if (own.has(id)) continue;
      const note = inForce.get(id);
      if (note === undefined) continue; // neither the run's nor the source's: the position checks flag it
      if (sameDataset && streamIds.has(note.source_query_id)) violations.push({ kind: "memory-source", queryId: r.query_id, streamPosition: position.get(r.query_id) ?? -1, detail: `step ${r.repair_iteration} retrieved source note ${id}, written about query ${note.source_query_id} of this run's stream` });
    }
  }
  return { violations, sourceIds: new Set([...inForce.keys()].filter((id) => !own.has(id))) };
}

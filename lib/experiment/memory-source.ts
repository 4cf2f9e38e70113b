/**
 * Experiment runs, a memory from another run (issue 36 §6; METHOD.md §12.4): config `memory_source`
 * names a finished run directory (transfer: a memory built on Spider shown to a Spider-DK or BIRD
 * run). Its memory joins this run's memory **read-only** — a note memory's notes in force at its end,
 * or MERIT's entries of its memory/ files at its end (lib/memory/sourced-store.ts: re-identified, at
 * position −1) —: eligible at every stream position, never revised by this run's writes (a write that
 * supersedes or retires a source note is refused; an own entry never merges into a source entry),
 * never stored in this run's trajectories or memory files. A source note written about a query of this
 * run's stream (same dataset, same query id), or a source entry observed on one, is never shown: it
 * would carry the feedback of a query this run has not reached. The source is part of the run's
 * identity: the config names its path and manifest.json `memory_source` records its method, dataset,
 * trajectories_sha256 and note (or entry) counts, so a resume with a changed source is refused;
 * `merit audit` checks the source again (audit.ts).
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { MeritError } from "../errors.ts";
import { isEntryMemory } from "../methods/merit-memory.ts";
import type { HooksRecord, Note } from "../methods/hooks.ts";
import type { MethodSpec } from "../methods/index.ts";
import { checkRunComplete } from "./completeness.ts";
import { readMemoryEntries, readRunJson } from "./run-dir.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { asSourceEntries, sourceEntryId } from "../memory/sourced-store.ts";

/** What manifest.json records of a run's memory source (`notes_*` for a note memory, `entries_*` for MERIT's). */
export interface MemorySourceRecord {
  /** As the config names it. */
  path: string;
  method: string;
  dataset: string;
  trajectories_sha256: string;
  /** Notes in force at the source run's end. */
  notes_in_force?: number;
  /** Of those, the notes this run may be shown (none written about a query of its stream). */
  notes_shown?: number;
  /** MERIT's entry memory: the entries of the source run's memory at its end. */
  entries_in_force?: number;
  /** Of those, the entries this run may be shown (none observed on a query of its stream). */
  entries_shown?: number;
}

/**
 * The notes a run may be shown from `path` and their record. Refuses in one line a source that is not
 * a completed run, whose method has no memory hook or another one than `method`'s, or whose files
 * changed since it completed.
 */
export function readMemorySource(path: string, method: MethodSpec, dataset: string, streamIds: ReadonlySet<string>): { record: MemorySourceRecord; notes: Note[]; entries: MemoryEntry[] } {
  try {
    return readSource(path, method, dataset, streamIds);
  } catch (error) {
    // A damaged file of the source run: its own line, said to be the source's (not this run's --out).
    if (error instanceof MeritError && !error.message.startsWith(`config memory_source ${path}: `)) throw new MeritError(`config memory_source ${path}: ${error.message}`, { exitCode: error.exitCode, cause: error });
    throw error;
  }
}

function readSource(path: string, method: MethodSpec, dataset: string, streamIds: ReadonlySet<string>): { record: MemorySourceRecord; notes: Note[]; entries: MemoryEntry[] } {
  const fail = (what: string) => new MeritError(`config memory_source ${path}: ${what}`);
  const hook = method.hooks.memory;
  if (!hook) throw fail(`method ${method.name} has no memory hook to show a source memory to; leave memory_source out or run a method with a memory hook`);
  if (!existsSync(resolve(path))) throw fail("does not exist; name the directory of a finished `merit run` (its --out), as a path from the folder merit runs in or an absolute one");
  if (!statSync(resolve(path)).isDirectory()) throw fail("is a file, not a run directory; name the directory of a finished `merit run` (its --out)");
  if (!existsSync(join(resolve(path), "manifest.json"))) throw fail("holds no manifest.json, so it is no run directory; name the directory of a finished `merit run` (its --out)");
  const manifest = readRunJson(resolve(path), "manifest", { missing: "is missing or not JSON", invalid: "is missing or not JSON", fix: "name a run directory written by `merit run`" }) as { status?: string; method?: string; method_parts?: { hooks?: HooksRecord }; trajectories_sha256?: string; dataset?: { name?: string } };
  if (manifest.status !== "completed") throw fail("is not a completed run; finish it (merit run --resume) before using its memory");
  const trajectories = checkRunComplete(resolve(path));
  const sourceHook = manifest.method_parts?.hooks?.memory?.name;
  const sourceDataset = trajectories[0]?.dataset ?? manifest.dataset?.name ?? "";
  const base = { path, method: manifest.method ?? "", dataset: sourceDataset, trajectories_sha256: manifest.trajectories_sha256 ?? "" };
  if (isEntryMemory(hook)) {
    // MERIT's memory: the source run's entries at its end, none observed on a query of this stream.
    if (sourceHook !== hook.name) throw fail(`was written by ${sourceHook === undefined ? "a method without a memory hook" : `memory hook "${sourceHook}"`} (method ${manifest.method}), not MERIT's memory (${hook.name}) of method ${method.name}; a source memory's entries must be MERIT's`);
    const all = readMemoryEntries(resolve(path), "restore the source run, or name another") ?? [];
    const ours = (e: MemoryEntry) => sourceDataset === dataset && [e, ...e.provenance_history].some((o) => streamIds.has(o.source_query_id));
    const entries = asSourceEntries(all.filter((e) => !ours(e)), base.trajectories_sha256);
    return { record: { ...base, entries_in_force: all.length, entries_shown: entries.length }, notes: [], entries };
  }
  if (sourceHook !== hook.name) throw fail(`was written by ${sourceHook === undefined ? "a method without a memory hook" : `memory hook "${sourceHook}"`} (method ${manifest.method}), not "${hook.name}" of method ${method.name}; a source memory's notes must be the same hook's`);
  // The notes in force at its end: its writes and retirements replayed in stream order.
  const inForce = new Map<string, Note>();
  for (const t of [...trajectories].sort((a, b) => a.stream_position - b.stream_position)) {
    for (const id of t.memory_retires ?? []) inForce.delete(id);
    for (const n of t.memory_writes ?? []) inForce.set(n.note_id, n);
  }
  const notes = [...inForce.values()].filter((n) => !(sourceDataset === dataset && streamIds.has(n.source_query_id)));
  return { record: { ...base, notes_in_force: inForce.size, notes_shown: notes.length }, notes, entries: [] };
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
  const streamIds = new Set(trajectories.map((t) => t.query_id));
  const position = new Map(trajectories.map((t) => [t.query_id, t.stream_position]));
  const sameDataset = trajectories[0]?.dataset === record.dataset;
  if (record.entries_in_force !== undefined) {
    // MERIT's entries: each retrieved source entry is one of the source's, observed on no query of this stream.
    const entries = new Map((readMemoryEntries(resolve(record.path), "restore the source run") ?? []).map((e) => [sourceEntryId(record.trajectories_sha256, e.entry_id), e]));
    for (const r of retrievals) {
      for (const id of r.retrieved_entry_ids) {
        const e = entries.get(id);
        if (e !== undefined && sameDataset && [e, ...e.provenance_history].some((o) => streamIds.has(o.source_query_id))) {
          violations.push({ kind: "memory-source", queryId: r.query_id, streamPosition: position.get(r.query_id) ?? -1, detail: `step ${r.repair_iteration} retrieved source entry ${id}, observed on a query of this run's stream` });
        }
      }
    }
    return { violations, sourceIds: new Set(entries.keys()) };
  }
  const inForce = new Map<string, Note>();
  for (const t of [...source].sort((a, b) => a.stream_position - b.stream_position)) {
    for (const id of t.memory_retires ?? []) inForce.delete(id);
    for (const n of t.memory_writes ?? []) inForce.set(n.note_id, n);
  }
  const own = new Set(trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => n.note_id)));
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

/**
 * Experiment runs, the audit of a memory hook's revisions (METHOD.md §12.4; issue 36 §6): replays the
 * committed notes (`memory_writes`) and revisions (`memory_retires`, a note's `supersedes`) in stream
 * order and checks that
 *  - `revision`: every note an episode supersedes or retires was in force and visible to it — written
 *    at a strictly earlier stream position by another query and not already retired — and every
 *    note's `supersedes` is among its episode's `memory_retires`;
 *  - `retired-note`: no retrieval picks a note that an episode at an earlier stream position retired.
 * @module
 */
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import type { Trajectory } from "../repair/trajectory.ts";

/** One finding, in the shape of the causal audit's violations. */
export interface RevisionViolation {
  kind: "revision" | "retired-note";
  queryId: string;
  streamPosition: number;
  detail: string;
}

/** The revision checks of a run's trajectories and retrieval log. */
export function auditRevisions(trajectories: readonly Trajectory[], retrievals: readonly RetrievalLogRecord[]): RevisionViolation[] {
  const violations: RevisionViolation[] = [];
  const byPosition = [...trajectories].sort((a, b) => a.stream_position - b.stream_position);
  const written = new Map<string, { position: number; queryId: string }>();
  const retiredAt = new Map<string, number>();
  const positionOf = new Map(trajectories.map((t) => [t.query_id, t.stream_position]));
  for (const t of byPosition) {
    const at = { queryId: t.query_id, streamPosition: t.stream_position };
    const retires = new Set(t.memory_retires ?? []);
    for (const n of t.memory_writes ?? []) {
      for (const id of n.supersedes ?? []) if (!retires.has(id)) violations.push({ kind: "revision", ...at, detail: `note ${n.note_id} supersedes ${id}, which memory_retires does not list` });
    }
    for (const id of retires) {
      const source = written.get(id);
      const gone = retiredAt.get(id);
      if (source === undefined) violations.push({ kind: "revision", ...at, detail: `retires note ${id}, which no earlier episode wrote` });
      else if (source.queryId === t.query_id) violations.push({ kind: "revision", ...at, detail: `retires note ${id}, written by its own query (not in the memory it may see)` });
      else if (gone !== undefined) violations.push({ kind: "revision", ...at, detail: `retires note ${id}, already retired at stream position ${gone}` });
      else retiredAt.set(id, t.stream_position);
    }
    for (const n of t.memory_writes ?? []) written.set(n.note_id, { position: t.stream_position, queryId: t.query_id });
  }
  for (const r of retrievals) {
    const pos = positionOf.get(r.query_id) ?? -1;
    for (const id of r.retrieved_entry_ids) {
      const gone = retiredAt.get(id);
      if (gone !== undefined && gone < pos) violations.push({ kind: "retired-note", queryId: r.query_id, streamPosition: pos, detail: `step ${r.repair_iteration} retrieved note ${id}, retired at stream position ${gone}` });
    }
  }
  return violations;
}

/**
 * Analysis stage, the setting a report is over (issue 37 §4, issue 39 #4): the runs' stream order —
 * the paper's seeded shuffle or one structured order (METHOD.md §7, config `order`) — and the
 * database set each dataset was scored on (the Spider test-suite databases, the paper's protocol, or
 * the single ones). A report over a structured order names it in every table note and in its manifest
 * (its numbers are over that order only); a study's report, and a report of verified real models,
 * names both always.
 * @module
 */
import { datasetAdapter, datasetNames } from "../data/datasets/index.ts";
import type { RunIdentity } from "./run-directory.ts";

/** What the report manifest records as `setting`. */
export interface RunSetting {
  /** The config `order` of the runs (`random`: the paper's shuffle). */
  stream_order: string;
  /** The stream seeds of the runs, ascending. */
  seeds: number[];
  /** Per dataset, the database set its runs were scored on (`test-suite` / `single`), where it has a choice. */
  database_sets: Record<string, string>;
}

/**
 * The setting of the runs and its note lines, or null when the runs are on the paper's shuffle and
 * `always` is false (so reports of the paper's orders keep their bytes). The runs of one report share
 * one config but for the study's conditions, so one order.
 */
export function runSetting(identities: readonly RunIdentity[], always: boolean): { notes: string[]; record: RunSetting } | null {
  const orders = [...new Set(identities.map((id) => id.order ?? "random"))].sort();
  const order = orders.join(", ");
  if (!always && orders.every((o) => o === "random")) return null;
  const seeds = [...new Set(identities.map((id) => id.stream_seed))].sort((a, b) => a - b);
  const sets: Record<string, string> = {};
  for (const id of identities) {
    if (id.database_set === undefined || !datasetNames().includes(id.dataset) || !datasetAdapter(id.dataset).testSuiteDatabases) continue;
    sets[id.dataset] = sets[id.dataset] === undefined || sets[id.dataset] === id.database_set ? id.database_set : "mixed";
  }
  const seedText = `seed${seeds.length === 1 ? "" : "s"} ${seeds.join(", ")}`;
  const notes = [
    order === "random"
      ? `Stream orders: the paper's seeded shuffle (config order random), ${seedText}.`
      : `Stream order: ${order} (config order; METHOD.md §7), ${seedText}: every number here is over this order only, not over the paper's shuffled orders.`,
  ];
  const setNames = Object.keys(sets).sort();
  if (setNames.length > 0) {
    const words = (set: string) => (set === "test-suite" ? "the test-suite databases (the paper's protocol)" : set === "single" ? "its single databases, one per db_id (not the paper's test-suite EX)" : "mixed database sets");
    notes.push(`Databases: ${setNames.map((d) => `${d} scored on ${words(sets[d])}`).join("; ")}.`);
  }
  return { notes, record: { stream_order: order, seeds, database_sets: Object.fromEntries(setNames.map((d) => [d, sets[d]])) } };
}

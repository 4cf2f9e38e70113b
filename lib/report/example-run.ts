/**
 * Report stage, input adapter of Figure 2 (`merit report --example [DATASET:]QUERY_ID`): finds the
 * run that shows the chosen query — the given method's run with the lowest stream seed on the
 * query's dataset — and reads its files and the query's question for example-episode.ts.
 * @module
 */
import { UsageError } from "../errors.ts";
import { exampleEpisode, type ExampleEpisode } from "./example-episode.ts";
import { loadDatasetContext } from "./query-context.ts";
import { readRun } from "./run-reader.ts";

/** What the selection needs to know of each run directory. */
export interface ExampleRunIdentity {
  dir: string;
  dataset: string;
  method: string;
  stream_seed: number;
}

/**
 * The Figure 2 episode named by `spec` (`QUERY_ID`, or `DATASET:QUERY_ID` when several datasets
 * hold that id) in the `method` run with the lowest seed. Throws UsageError naming --example and
 * the fix; the episode's own checks throw MeritError (example-episode.ts).
 */
export function readExampleEpisode(runs: readonly ExampleRunIdentity[], spec: string, method: string, cwd: string): ExampleEpisode {
  const colon = spec.indexOf(":");
  const dataset = colon >= 0 ? spec.slice(0, colon) : undefined;
  const queryId = colon >= 0 ? spec.slice(colon + 1) : spec;
  if (queryId === "") throw new UsageError(`--example expects QUERY_ID or DATASET:QUERY_ID, got "${spec}"`);
  const ofMethod = runs.filter((r) => r.method === method && (dataset === undefined || r.dataset === dataset));
  if (ofMethod.length === 0) {
    const datasets = [...new Set(runs.filter((r) => r.method === method).map((r) => r.dataset))].sort();
    throw new UsageError(`--example ${spec}: no run of method ${method}${dataset === undefined ? "" : ` on ${dataset}`} (its runs cover ${datasets.join(", ") || "no dataset"}); pass --reference with the method to show`);
  }
  const byDataset = new Map<string, ExampleRunIdentity>();
  for (const r of [...ofMethod].sort((a, b) => a.stream_seed - b.stream_seed)) if (!byDataset.has(r.dataset)) byDataset.set(r.dataset, r);
  const read = [...byDataset.values()].map((r) => readRun(r.dir, r.dir));
  const holding = read.filter((r) => r.trajectories.some((t) => t.query_id === queryId));
  if (holding.length === 0) throw new UsageError(`--example ${spec}: query ${queryId} is in no ${method} run${dataset === undefined ? "" : ` on ${dataset}`}; pick a query id of the runs' trajectories.jsonl`);
  if (holding.length > 1) {
    const names = holding.map((r) => r.trajectories[0].dataset).sort();
    throw new UsageError(`--example ${spec}: query ${queryId} is in the runs of ${names.join(" and ")}; say which, e.g. --example ${names[0]}:${queryId}`);
  }
  const run = holding[0];
  const t = run.trajectories.find((x) => x.query_id === queryId)!;
  const ctx = run.dataDir === null ? null : loadDatasetContext(t.dataset, run.dataDir, cwd);
  const question = ctx === null || typeof ctx === "string" ? null : (ctx.queries.get(queryId)?.question ?? null);
  return exampleEpisode(run, queryId, question);
}

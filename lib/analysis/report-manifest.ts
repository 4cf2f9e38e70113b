/**
 * Analysis stage, report manifest (METHOD.md §9 "every table records B, seed and interval type"):
 * `results/<name>/manifest.json` — the identities of the input runs and the statistics settings.
 * Deterministic: no timestamps, runs sorted, canonical key order, so the same inputs give the same bytes.
 * @module
 */
import type { RunSetting } from "./run-setting.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";
import type { RunIdentity } from "./run-directory.ts";

/** Statistics settings of the report. */
export interface ReportSettings {
  resamples: number;
  seed: number;
  interval: "percentile" | "bca";
  level: number;
}

/** Extra inputs that change the tables (hashes of files, not their paths' machines). */
export interface ReportExtras {
  /** sha256 of the gold-label CSV, when one was given. */
  gold_labels_sha256?: string;
  /** sha256 of the JSONL annotation file, when one was given. */
  annotations_sha256?: string;
  /** The --min-gold-labels threshold, when lowered below METHOD.md §8's 150 (or raised). */
  min_gold_labels?: number;
  /** The runs' models and the banner the report carries (model-identity.ts). */
  model_identity?: { line: string; banner: string | null; chat: JsonValue; embedders: JsonValue };
  /** Which methods and comparisons the tables show (paper layout by default, report.ts flags). */
  table_selection?: { all_methods: boolean; all_comparisons: boolean; methods?: string[]; comparisons?: string[] };
  /** The paper's numbers compared in COMPARISON.md (--paper-numbers): source id and file sha256. */
  paper_numbers?: { source: string; sha256: string };
  /** The episode drawn as Figure 2 (--example): dataset, query, method and stream seed of its run. */
  example_episode?: { dataset: string; query_id: string; method: string; stream_seed: number };
  /** The SQL executors that scored the runs (manifest `executor`; `sqlite` where a manifest predates it), sorted. */
  executors?: string[];
  /** Transient server failures retried over the runs (manifest `transport`), present when any run met one. */
  transport?: { transient_retries: number; retried_calls: number; runs: number };
  /** The learning curves' bootstrap (--curves): resamples B, seed and level of the band. */
  learning_curves?: { resamples: number; seed: number; level: number };
  /** The memory diagnostics (--diagnostics): how many runs were a memory method's. */
  memory_diagnostics?: { runs: number };
  /** The peers table's reference and peer family (present when the report wrote it). */
  peers?: { reference: string; peers: string[] };
  /** The long run the token-matched comparison reads at every K′ (prefix-runs.ts): its method and K per dataset. */
  token_matched?: { method: string; k: Record<string, number> };
  /** The runs' stream order, seeds and database sets (run-setting.ts; a study's report, or a structured order). */
  setting?: RunSetting;
}

/** The manifest as pretty JSON with sorted keys and a final newline. */
export function reportManifest(runs: readonly RunIdentity[], maxRepairSteps: number, settings: ReportSettings, extras: ReportExtras = {}): string {
  const sorted = [...runs].sort(
    (x, y) => cmp(x.dataset, y.dataset) || cmp(x.method, y.method) || x.stream_seed - y.stream_seed || cmp(x.dir, y.dir),
  );
  const records = sorted.map((r) => ({
    run_dir: r.dir.replace(/\\/g, "/"),
    dataset: r.dataset,
    method: r.method,
    stream_seed: r.stream_seed,
    trajectories_sha256: r.trajectories_sha256,
    config_hash: r.config_hash,
    cache_hash: r.cache_hash,
    dataset_checksum: r.dataset_checksum,
    database_manifest_hash: r.database_manifest_hash,
    database_set: r.database_set, // single / test-suite; absent for manifests that did not record it
  }));
  // the inputs' hash leaves out run_dir so the same runs copied elsewhere hash alike
  const inputs_hash = contentHash(records.map(({ run_dir: _dir, ...rest }) => rest));
  const manifest = {
    format_version: "merit-report-v1",
    bootstrap: { resamples: settings.resamples, seed: settings.seed, interval: settings.interval, level: settings.level },
    max_repair_steps: maxRepairSteps,
    inputs_hash,
    runs: records,
    ...extras,
  };
  return JSON.stringify(JSON.parse(canonicalJson(manifest as unknown as JsonValue)), null, 2) + "\n";
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Analysis stage, run-directory adapter (METHOD.md §9 shared controls, §4.5): reads what `merit
 * report` needs from a finished run directory besides its trajectories — the identity that alignment
 * compares (manifest.json, config.json, sha256 of trajectories.jsonl) and the memory entries.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { InputFileError } from "../errors.ts";
import { sha256Hex } from "../hash.ts";
import type { MemoryEntry, Polarity } from "../memory/entry.ts";
import { checkRunComplete } from "../experiment/completeness.ts";
import { memoryFiles, readJsonLines, readRunJson, readRunManifest, runFile, type ModelRecord, type RunJsonProblem } from "../experiment/run-dir.ts";

/** The identity of one run, as compared across the runs of a report and recorded in its manifest. */
export interface RunIdentity {
  /** The directory as the user passed it (or as found below a passed folder). */
  dir: string;
  dataset: string;
  method: string;
  stream_seed: number;
  /** `initial_cache.cache_hash` of manifest.json. */
  cache_hash: string;
  /** `dataset.checksum` of manifest.json (examples + tables file hashes, METHOD.md §1.4). */
  dataset_checksum: string;
  /** `dataset.database_manifest_hash` of manifest.json. */
  database_manifest_hash: string;
  /** `database_set.kind` of manifest.json (`single` / `test-suite`); absent in manifests written before it was recorded. */
  database_set?: string;
  /** K = `config.max_repair_steps` of config.json. */
  max_repair_steps: number;
  /** `config.order` of config.json, a structured stream order (METHOD.md §7); absent for the paper's shuffle. */
  order?: string;
  /** `config_hash` of manifest.json. */
  config_hash: string;
  /** sha256 of the bytes of trajectories.jsonl. */
  trajectories_sha256: string;
  /** `backend` of manifest.json (the chat model), null when the manifest has none. */
  model?: ModelRecord | null;
  /** `embedder` of manifest.json, null for memoryless methods. */
  embedder?: ModelRecord | null;
  /** `executor` of manifest.json: the SQL engine that scored the run (`sqlite` where the manifest predates the field). */
  executor?: string;
  /** `transport` of manifest.json: transient server failures retried while the run was finished; absent when none. */
  transport?: { transient_retries: number; retried_calls: number };
  /** `timing` of manifest.json: measured retrieval and memory wall time of a memory method (run.ts TimingRecord); absent for memoryless runs. */
  timing?: { retrieval_ms: number; memory_ms: number; episodes: number };
}

const ConfigFileSchema = z.object({ config: z.object({ max_repair_steps: z.number().int().nonnegative(), order: z.string().optional() }) });

/** What a missing or broken file of a run passed to `merit report` means. */
function problem(what: string): RunJsonProblem {
  return { missing: `is missing, so the run's ${what} cannot be checked`, fix: "pass directories written by `merit run` (report refuses runs it cannot align)", invalidFix: "restore the run's file or re-run it" };
}

/** Reads and checks the identity of the finished run in `dir` (manifest status must be `completed`). */
export function readRunIdentity(dir: string): RunIdentity {
  const manifestFile = runFile(dir, "manifest");
  const manifest = readRunManifest(dir, problem("initial cache and data hashes"));
  if (manifest.status !== "completed") throw new InputFileError(manifestFile, `says status "${manifest.status}"`, "finish (resume) the run before reporting it");
  checkRunComplete(dir); // trajectory count = stream_length, positions 0..n−1 once each
  const configFile = runFile(dir, "config");
  const c = ConfigFileSchema.safeParse(readRunJson(dir, "config", problem("K (max_repair_steps)")));
  if (!c.success) throw new InputFileError(configFile, `lacks ${c.error.issues[0].path.join(".")}`, "restore the run's config.json");
  return {
    dir,
    dataset: manifest.dataset.name,
    method: manifest.method,
    stream_seed: manifest.stream_seed,
    cache_hash: manifest.initial_cache.cache_hash,
    dataset_checksum: manifest.dataset.checksum,
    database_manifest_hash: manifest.dataset.database_manifest_hash,
    ...(manifest.database_set ? { database_set: manifest.database_set.kind } : {}),
    max_repair_steps: c.data.config.max_repair_steps,
    ...(c.data.config.order !== undefined && c.data.config.order !== "random" ? { order: c.data.config.order } : {}),
    config_hash: manifest.config_hash,
    trajectories_sha256: sha256Hex(readFileSync(runFile(dir, "trajectories"))),
    model: pickModel(manifest.backend),
    embedder: pickModel(manifest.embedder),
    executor: manifest.executor ?? "sqlite",
    ...(manifest.transport ? { transport: manifest.transport } : {}),
    ...(manifest.timing ? { timing: manifest.timing } : {}),
  };
}

function pickModel(m: ModelRecord | null | undefined): ModelRecord | null {
  return m ? { kind: m.kind, model: m.model, modelHash: m.modelHash } : null;
}

/** When an entry first entered memory and with which polarity (see memory-growth.ts). */
export interface EntryBirth {
  polarity: Polarity;
  /** Smallest source_stream_position over the entry and its provenance_history. */
  position: number;
}

/**
 * The entries of `dir/memory/` as births, or null when the run has no memory folder (memoryless
 * methods). An entry is born at the earliest stream position among its observations: merging
 * later observations into it does not create a new entry.
 */
export function readEntryBirths(dir: string): EntryBirth[] | null {
  const files = memoryFiles(dir);
  if (files === null) return null;
  const births: EntryBirth[] = [];
  for (const file of files.entries) {
    if (!existsSync(file)) continue;
    readJsonLines<Pick<MemoryEntry, "polarity" | "source_stream_position" | "provenance_history">>(file, "restore the run's memory files or re-run it").forEach((entry, i) => {
      const positions = [entry.source_stream_position, ...(entry.provenance_history ?? []).map((o) => o.source_stream_position)];
      if (positions.some((p) => !Number.isInteger(p)) || (entry.polarity !== "positive" && entry.polarity !== "negative")) {
        throw new InputFileError(file, `line ${i + 1} lacks polarity or source_stream_position`, "restore the run's memory files or re-run it");
      }
      births.push({ polarity: entry.polarity, position: Math.min(...positions) });
    });
  }
  return births;
}

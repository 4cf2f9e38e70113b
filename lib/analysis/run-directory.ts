/**
 * Analysis stage, run-directory adapter (METHOD.md §9 shared controls, §4.5): reads what `merit
 * report` needs from a finished run directory besides its trajectories — the identity that alignment
 * compares (manifest.json, config.json, sha256 of trajectories.jsonl) and the memory entries.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { InputFileError } from "../errors.ts";
import { sha256Hex } from "../hash.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { checkRunComplete } from "../experiment/completeness.ts";
import { MEMORY_FILES } from "../memory/jsonl-store.ts";
import type { Polarity } from "./memory-growth.ts";
import type { ModelRecord } from "./model-identity.ts";

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
  /** `config_hash` of manifest.json. */
  config_hash: string;
  /** sha256 of the bytes of trajectories.jsonl. */
  trajectories_sha256: string;
  /** `backend` of manifest.json (the chat model), null when the manifest has none. */
  model?: ModelRecord | null;
  /** `embedder` of manifest.json, null for memoryless methods. */
  embedder?: ModelRecord | null;
}

const ModelSchema = z.object({ kind: z.string(), model: z.string(), modelHash: z.string() });

const ManifestSchema = z.object({
  status: z.string(),
  method: z.string(),
  stream_seed: z.number().int(),
  config_hash: z.string(),
  dataset: z.object({ name: z.string(), checksum: z.string(), database_manifest_hash: z.string() }),
  initial_cache: z.object({ cache_hash: z.string() }),
  database_set: z.object({ kind: z.string() }).optional(),
  backend: ModelSchema.nullable().optional(),
  embedder: ModelSchema.nullable().optional(),
});

const ConfigFileSchema = z.object({ config: z.object({ max_repair_steps: z.number().int().nonnegative() }) });

function readJson(file: string, what: string): unknown {
  if (!existsSync(file)) throw new InputFileError(file, `is missing, so the run's ${what} cannot be checked`, "pass directories written by `merit run` (report refuses runs it cannot align)");
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (cause) {
    throw new InputFileError(file, "is not JSON", "restore the run's file or re-run it", cause);
  }
}

/** Reads and checks the identity of the finished run in `dir` (manifest status must be `completed`). */
export function readRunIdentity(dir: string): RunIdentity {
  const manifestFile = join(dir, "manifest.json");
  const m = ManifestSchema.safeParse(readJson(manifestFile, "initial cache and data hashes"));
  if (!m.success) throw new InputFileError(manifestFile, `lacks ${m.error.issues[0].path.join(".")}`, "re-run the run with this version of `merit run`");
  if (m.data.status !== "completed") throw new InputFileError(manifestFile, `says status "${m.data.status}"`, "finish (resume) the run before reporting it");
  checkRunComplete(dir); // trajectory count = stream_length, positions 0..n−1 once each
  const configFile = join(dir, "config.json");
  const c = ConfigFileSchema.safeParse(readJson(configFile, "K (max_repair_steps)"));
  if (!c.success) throw new InputFileError(configFile, `lacks ${c.error.issues[0].path.join(".")}`, "restore the run's config.json");
  return {
    dir,
    dataset: m.data.dataset.name,
    method: m.data.method,
    stream_seed: m.data.stream_seed,
    cache_hash: m.data.initial_cache.cache_hash,
    dataset_checksum: m.data.dataset.checksum,
    database_manifest_hash: m.data.dataset.database_manifest_hash,
    ...(m.data.database_set ? { database_set: m.data.database_set.kind } : {}),
    max_repair_steps: c.data.config.max_repair_steps,
    config_hash: m.data.config_hash,
    trajectories_sha256: sha256Hex(readFileSync(join(dir, "trajectories.jsonl"))),
    model: pickModel(m.data.backend),
    embedder: pickModel(m.data.embedder),
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
  const memoryDir = join(dir, "memory");
  if (!existsSync(memoryDir)) return null;
  const births: EntryBirth[] = [];
  for (const name of [MEMORY_FILES.positive, MEMORY_FILES.negative]) {
    const file = join(memoryDir, name);
    if (!existsSync(file)) continue;
    readFileSync(file, "utf8").split("\n").forEach((line, i) => {
      if (line.trim() === "") return;
      let entry: Pick<MemoryEntry, "polarity" | "source_stream_position" | "provenance_history">;
      try {
        entry = JSON.parse(line);
      } catch (cause) {
        throw new InputFileError(file, `line ${i + 1} is not JSON`, "restore the run's memory files or re-run it", cause);
      }
      const positions = [entry.source_stream_position, ...(entry.provenance_history ?? []).map((o) => o.source_stream_position)];
      if (positions.some((p) => !Number.isInteger(p)) || (entry.polarity !== "positive" && entry.polarity !== "negative")) {
        throw new InputFileError(file, `line ${i + 1} lacks polarity or source_stream_position`, "restore the run's memory files or re-run it");
      }
      births.push({ polarity: entry.polarity, position: Math.min(...positions) });
    });
  }
  return births;
}

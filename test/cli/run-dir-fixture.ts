// Test helper (not a suite): writes synthetic finished run directories — trajectories.jsonl plus the manifest.json and config.json fields `merit report` aligns on,
// and as many prompts.jsonl / retrieval_log.jsonl lines as the trajectories made (the completeness check of lib/experiment/completeness.ts counts them).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectedJournalLines } from "../../lib/experiment/completeness.ts";
import { retrievesMemory } from "../../lib/methods/method.ts";
import { getMethod, methodNames } from "../../lib/methods/index.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";

/** Identity fields of a synthetic run; the defaults make runs of one dataset aligned. */
export interface FixtureIdentity {
  cache_hash?: string;
  dataset_checksum?: string;
  database_manifest_hash?: string;
  max_repair_steps?: number;
  status?: string;
  /** `backend` (chat model identity) of manifest.json; absent by default. */
  backend?: { kind: string; model: string; modelHash: string };
  /** `embedder` of manifest.json; absent by default. */
  embedder?: { kind: string; model: string; modelHash: string };
  /** `config.data_dir` of config.json. @default "data/spider" */
  data_dir?: string;
  /** Memory entries to write under memory/ (polarity, birth position). */
  memory?: { polarity: "positive" | "negative"; position: number }[];
}

/** Writes `dir` as a completed run of the trajectories' (dataset, method, seed). */
export function writeRunDir(dir: string, given: readonly Trajectory[], id: FixtureIdentity = {}): string {
  // A real run visits stream positions 0..n−1 in order; synthetic trajectories get them here.
  const trajectories = given.map((x, i) => ({ ...x, stream_position: i }));
  const t = trajectories[0];
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "trajectories.jsonl"), trajectories.map((x) => JSON.stringify(x)).join("\n") + "\n");
  const manifest = {
    format_version: "merit-run-v1",
    status: id.status ?? "completed",
    method: t.method,
    stream_seed: t.stream_seed,
    stream_length: trajectories.length,
    config_hash: `config-${t.method}`,
    dataset: { name: t.dataset, checksum: id.dataset_checksum ?? `data-${t.dataset}`, database_manifest_hash: id.database_manifest_hash ?? `db-${t.dataset}` },
    initial_cache: { path: "init.json", cache_hash: id.cache_hash ?? `cache-${t.dataset}` },
    ...(id.backend ? { backend: { ...id.backend, params: {} } } : {}),
    ...(id.embedder ? { embedder: { ...id.embedder, params: {} } } : {}),
    started_at: new Date().toISOString(),
    finished_at: new Date().toISOString(),
  };
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  const expected = expectedJournalLines(trajectories, methodNames().includes(t.method) && retrievesMemory(getMethod(t.method))); // a hook memory (a peer's) retrieves too
  writeFileSync(join(dir, "prompts.jsonl"), "{}\n".repeat(expected.prompts));
  writeFileSync(join(dir, "retrieval_log.jsonl"), "{}\n".repeat(expected.retrievals));
  const config = { config: { dataset: t.dataset, data_dir: id.data_dir ?? "data/spider", max_repair_steps: id.max_repair_steps ?? 7 }, method: t.method, seed: t.stream_seed, limit: null };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2) + "\n");
  if (id.memory) {
    mkdirSync(join(dir, "memory"), { recursive: true });
    for (const polarity of ["positive", "negative"] as const) {
      const lines = id.memory
        .filter((m) => m.polarity === polarity)
        .map((m) => JSON.stringify({ polarity, source_stream_position: m.position, provenance_history: [{ source_stream_position: m.position }] }));
      writeFileSync(join(dir, "memory", `memory_${polarity}.jsonl`), lines.map((l) => l + "\n").join(""));
    }
  }
  return dir;
}

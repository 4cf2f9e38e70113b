/**
 * Experiment runs, the inputs runs share (METHOD.md §9 shared controls, §11): the streams of one grid
 * folder and the runs one report compares differ only in their method and stream seed. Everything
 * else that resume compares — config.json without `method` and `seed` (decoding, K, retrieval,
 * limit, …), and manifest.json without its per-stream and resumable fields (model and embedder hashes,
 * code hash, data and database hashes, initial cache, oracle protocol, prompt templates, package
 * versions) — must be equal, or the runs' differences are not the methods' doing. The comparison is
 * resume's own (run.ts `firstDifference`, `FIELD_MEANING`, `RESUMABLE_MANIFEST_FIELDS`).
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { InputFileError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { readRunJson, runFile } from "./run-dir.ts";
import { FIELD_MEANING, firstDifference, manifestBody, RESUMABLE_MANIFEST_FIELDS, runIdentity, shown, type RunOptions } from "./run.ts";

/**
 * Manifest fields that belong to one stream (its method and seed) or that a plugin method adds:
 * `config_hash` covers method and seed (config.json is compared without them instead); a memoryless
 * method has no embedder (embedders are compared where both runs have one).
 */
const PER_STREAM_MANIFEST_FIELDS: ReadonlySet<string> = new Set(["method", "method_description", "method_parts", "stream_seed", "stream_length", "config_hash", "embedder", "plugins"]);

/** What a run shares with the other runs of its grid folder or report. */
export interface SharedInputs {
  /** config.json without `method` and `seed`. */
  config: Record<string, unknown>;
  /** manifest.json without per-stream and resumable fields. */
  manifest: Record<string, unknown>;
  /** The manifest's `embedder`, null for memoryless methods. */
  embedder: unknown;
}

/** The shared inputs of a run from its config.json (run.ts `runIdentity`) and manifest.json contents. */
export function sharedInputsOf(configJson: unknown, manifestJson: unknown): SharedInputs {
  const { method: _method, seed: _seed, ...config } = (configJson ?? {}) as Record<string, unknown>;
  const manifest = (manifestJson ?? {}) as Record<string, unknown>;
  const shared = Object.fromEntries(Object.entries(manifest).filter(([k]) => !PER_STREAM_MANIFEST_FIELDS.has(k) && !RESUMABLE_MANIFEST_FIELDS.has(k)));
  return { config, manifest: shared, embedder: manifest.embedder ?? null };
}

/** The shared inputs recorded in run directory `dir`, or null when it holds no config.json and manifest.json. */
export function readSharedInputs(dir: string, fix: string): SharedInputs | null {
  if (!existsSync(runFile(dir, "config")) || !existsSync(runFile(dir, "manifest"))) return null;
  return sharedInputsOf(readRunJson(dir, "config", { fix }), readRunJson(dir, "manifest", { fix }));
}

/** The first shared input two runs differ in: `what` it is, and both values as shown in a refusal line. */
export interface InputDifference {
  /** e.g. `config (config.json config.decoding.max_output_tokens)`, `model (manifest.json backend.modelHash)`. */
  what: string;
  first: string;
  second: string;
}

/** The first shared input `a` and `b` differ in (config first, then the manifest), or null. */
export function sharedInputDifference(a: SharedInputs, b: SharedInputs): InputDifference | null {
  const config = firstDifference(a.config as JsonValue, b.config as JsonValue);
  if (config) return { what: `config (config.json ${config.path})`, first: shown(config.there), second: shown(config.here) };
  const manifest = firstDifference(a.manifest as JsonValue, b.manifest as JsonValue);
  if (manifest) return { what: `${FIELD_MEANING[manifest.path.split(".")[0]] ?? manifest.path} (manifest.json ${manifest.path})`, first: shown(manifest.there), second: shown(manifest.here) };
  if (a.embedder !== null && b.embedder !== null) {
    const embedder = firstDifference(a.embedder as JsonValue, b.embedder as JsonValue, "embedder");
    if (embedder) return { what: `embedding model (manifest.json ${embedder.path})`, first: shown(embedder.there), second: shown(embedder.here) };
  }
  return null;
}

/**
 * Refuses a grid (or one shard of it) whose `--out` folder `root` already holds runs — other than
 * this grid's own streams, which resume checks — made with other inputs, naming the first field that
 * differs. Called with the loaded services' identities and before any stream writes.
 */
export function checkGridFolder(root: string, streams: readonly RunOptions[]): void {
  if (streams.length === 0 || !existsSync(root)) return;
  const own = new Set(streams.map((o) => resolve(o.outDir)));
  const model = streams.find((o) => o.services.embedder !== undefined) ?? streams[0];
  const here = sharedInputsOf(JSON.parse(canonicalJson(runIdentity(model.spec) as unknown as JsonValue)), manifestBody(model, 0));
  const dirs = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  for (const name of dirs) {
    const dir = join(root, name);
    if (own.has(resolve(dir))) continue;
    const there = readSharedInputs(dir, "restore the run's files, or give this grid its own --out");
    const d = there && sharedInputDifference(there, here);
    if (d) throw new InputFileError(dir, `holds a run made with another ${d.what}: ${d.first} there but ${d.second} now`, "run this grid (or shard) with the inputs of the runs already in its --out, or give it its own --out");
  }
}

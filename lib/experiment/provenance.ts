/**
 * Experiment runs, provenance for manifests (STYLE.md §2.7): git commit and dirty flag, versions of
 * Node and the packages that shape results, prompt template hashes, the chat backend's identity, and
 * the database set that scored the run (METHOD.md §1.4; single vs test-suite, tree hash).
 * @module
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex, type JsonValue } from "../hash.ts";
import type { ChatBackend } from "../llm/types.ts";
import type { DatabaseSetRecord } from "./database-set.ts";
import { PROMPT_FORMAT_VERSION, templateHashes, templateSetHash } from "../prompts.ts";

const PACKAGES = ["node-llama-cpp", "better-sqlite3", "hnswlib-node", "natural", "zod"];

function git(args: string[]): string | null {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

function packageVersion(name: string): string | null {
  try {
    const require = createRequire(import.meta.url);
    const path = require.resolve(`${name}/package.json`);
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

const LIB = fileURLToPath(new URL("..", import.meta.url));

/**
 * SHA-256 over the kit's own code (every file under lib/, by relative path and content): the
 * code-version identity a resumed run must share with the run it continues (README "Reliability").
 * Unlike the git commit it also covers uncommitted edits, and ignores commits that touch no code.
 */
export function codeHash(dir: string = LIB): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) files.push(full);
    }
  };
  walk(dir);
  const parts = files.map((f) => ({ path: relative(dir, f).split("\\").join("/"), sha256: sha256Hex(readFileSync(f)) })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sha256Hex(Buffer.from(parts.map((p) => `${p.path}\t${p.sha256}\n`).join(""), "utf8"));
}

/**
 * Fields every run manifest records besides the run's own identity; `promptsDir` is the config's
 * `prompts_dir` (absent = the kit's prompts/), recorded with the hash of every template it holds;
 * `database_set` when given.
 */
export async function runManifestExtras(backend: ChatBackend, promptsDir?: string, databaseSet?: DatabaseSetRecord): Promise<Record<string, JsonValue>> {
  const status = git(["status", "--porcelain", "--untracked-files=no"]);
  return {
    git: { commit: git(["rev-parse", "HEAD"]), dirty: status === null ? null : status.length > 0 },
    code_hash: codeHash(),
    node: process.version,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
    prompt_format_version: PROMPT_FORMAT_VERSION,
    prompts_dir: promptsDir ?? null,
    prompt_templates: templateHashes(promptsDir),
    prompt_template_set_hash: templateSetHash(promptsDir),
    model_identity: backend.identity as unknown as JsonValue,
    exactness: exactnessOf(backend),
    llama_cpp: llamaRuntimeInfo(backend),
    ...(databaseSet ? { database_set: databaseSet } : {}),
  };
}

/** The run's exactness contract (README, "Reproducibility, and its known limits"). */
function exactnessOf(backend: ChatBackend): string {
  const replay = "replay-exact through the call cache";
  if (backend.identity.kind !== "llama.cpp") return `${replay}; recomputation depends on the server`;
  return backend.identity.params.mode === "throughput"
    ? `${replay}; recomputation may differ at near-tied logits (throughput mode: batched decoding)`
    : `${replay}; recomputation bit-exact (deterministic mode)`;
}

/** node-llama-cpp build and GPU of a llama.cpp backend (null for other backends). */
function llamaRuntimeInfo(backend: ChatBackend): JsonValue {
  const model = (backend as { model?: { llama?: { gpu: unknown; buildType: string; llamaCppRelease: { release: string }; cpuMathCores: number } } }).model;
  const llama = model?.llama;
  if (!llama) return null;
  return { gpu: String(llama.gpu), build_type: llama.buildType, release: llama.llamaCppRelease.release, cpu_math_cores: llama.cpuMathCores };
}

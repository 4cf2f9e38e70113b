/**
 * Experiment runs, provenance for manifests (STYLE.md §2.7): git commit and dirty flag, versions of
 * Node and the packages that shape results, prompt template hashes, and the chat backend's identity.
 * @module
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { sha256Hex, type JsonValue } from "../hash.ts";
import type { ChatBackend } from "../llm/types.ts";
import { PROMPT_FORMAT_VERSION, templateHash } from "../prompts.ts";

const PACKAGES = ["node-llama-cpp", "better-sqlite3", "hnswlib-node", "natural", "zod"];
const TEMPLATES = ["spider-initial-v3", "spider-repair-v3", "spider-reflection-v3", "bird-initial-v3", "bird-repair-v3", "bird-reflection-v3", "bird-context-v3"];

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

/** Fields every run manifest records besides the run's own identity. */
export async function runManifestExtras(backend: ChatBackend): Promise<Record<string, JsonValue>> {
  const status = git(["status", "--porcelain", "--untracked-files=no"]);
  return {
    git: { commit: git(["rev-parse", "HEAD"]), dirty: status === null ? null : status.length > 0 },
    code_hash: codeHash(),
    node: process.version,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
    prompt_format_version: PROMPT_FORMAT_VERSION,
    prompt_templates: Object.fromEntries(TEMPLATES.map((t) => [t, templateHash(t)])),
    model_identity: backend.identity as unknown as JsonValue,
    llama_cpp: llamaRuntimeInfo(backend),
  };
}

/** node-llama-cpp build and GPU of a llama.cpp backend (null for other backends). */
function llamaRuntimeInfo(backend: ChatBackend): JsonValue {
  const model = (backend as { model?: { llama?: { gpu: unknown; buildType: string; llamaCppRelease: { release: string }; cpuMathCores: number } } }).model;
  const llama = model?.llama;
  if (!llama) return null;
  return { gpu: String(llama.gpu), build_type: llama.buildType, release: llama.llamaCppRelease.release, cpu_math_cores: llama.cpuMathCores };
}

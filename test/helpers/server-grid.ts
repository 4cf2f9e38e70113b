/**
 * `merit grid` over real llama-servers for the load, restart and fault tests (issue 23 §2): writes a
 * grid config for the openai backend (token-id prompts, the tiny Qwen, every initial SQL "" so every
 * query repairs), runs the grid in process in its own working directory (the call cache path is
 * relative, so config.json is the same for every grid of a test), and reads back what the tests
 * compare: the call cache's rows, the run files of every stream, the "LLM calls" line, the
 * manifests' `transport` records.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { gridCommand } from "../../lib/cli/run.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, TINY_QWEN } from "./run-fixture.ts";
import { budget } from "./budget.ts";

/** The run files compared byte for byte (manifest.json and stdout.log hold timestamps). */
export const COMPARED_RUN_FILES = ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json", "config.json"];

/** Writes the initial cache (every query's SQL "", scored without a database) under `root`. */
export async function repairEveryQueryCache(root: string): Promise<string> {
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  try {
    return (await cacheFromChosenSql(dataset, oracle, new Map(), root)).path;
  } finally {
    await oracle.close();
  }
}

export interface ServerGridOptions {
  root: string;
  /** Folder of this grid under `root` (its cwd, call cache and runs). */
  name: string;
  initialCache: string;
  /** The config's `model` beyond backend, engine and path (base_urls, requests_per_url, …). */
  model: Record<string, unknown>;
  methods: string;
  seeds: string;
  limit: number;
  resume?: boolean;
  /** Called once the grid has started, with the call cache path; the grid runs meanwhile. */
  whileRunning?: (cache: string) => Promise<void>;
}

export interface ServerGridRun {
  /** Exit code; 2 when the grid threw (then `error` holds it). */
  code: number;
  error: Error | null;
  err: string[];
  cache: string;
  out: string;
}

/** Runs `merit grid` in process in `root/name`. */
export async function runServerGrid(opts: ServerGridOptions): Promise<ServerGridRun> {
  const dir = join(opts.root, opts.name);
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "grid.json");
  writeFileSync(config, JSON.stringify({
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: opts.initialCache,
    call_cache: "llm-calls.sqlite",
    max_repair_steps: 2,
    model: { backend: "openai", engine: "llama.cpp", path: TINY_QWEN, ...opts.model },
    decoding: { max_output_tokens: 16 },
  }));
  const err: string[] = [];
  const cwd = process.cwd();
  process.chdir(dir);
  const out = join(dir, "runs");
  try {
    const args = ["--config", config, "--methods", opts.methods, "--seeds", opts.seeds, "--limit", String(opts.limit), "--out", out, ...(opts.resume ? ["--resume"] : [])];
    const running = gridCommand.run(args, { out: () => {}, err: (l) => err.push(l) }).then(
      (code) => ({ code, error: null }),
      (error: unknown) => ({ code: 2, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    if (opts.whileRunning) await opts.whileRunning(join(dir, "llm-calls.sqlite"));
    return { ...(await running), err, cache: join(dir, "llm-calls.sqlite"), out };
  } finally {
    process.chdir(cwd);
  }
}

/** Rows of the call cache (key → stored text), by key; empty when the file is absent. */
export function cacheRows(path: string): Map<string, string> {
  if (!existsSync(path)) return new Map();
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return new Map(db.prepare("SELECT key, text FROM calls ORDER BY key").all().map((r) => [(r as { key: string }).key, (r as { text: string }).text]));
  } finally {
    db.close();
  }
}

/** Every compared run file of every stream under `out`, by `stream/file`. */
export function runFiles(out: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const stream of readdirSync(out).sort()) {
    for (const file of COMPARED_RUN_FILES) {
      const path = join(out, stream, file);
      if (existsSync(path)) files.set(`${stream}/${file}`, readFileSync(path, "utf8"));
    }
  }
  return files;
}

/** `N` of the grid's last line "LLM calls: N computed, M from the call cache". */
export function computedCalls(err: readonly string[]): number {
  return Number(/LLM calls: (\d+) computed, (\d+) from the call cache/.exec(err.join("\n"))?.[1]);
}

/** The streams' manifest.json `transport` records summed (0s when none recorded one). */
export function transportTotals(out: string): { transient_retries: number; retried_calls: number; runs: number } {
  const total = { transient_retries: 0, retried_calls: 0, runs: 0 };
  for (const stream of readdirSync(out)) {
    const manifest = JSON.parse(readFileSync(join(out, stream, "manifest.json"), "utf8")) as { transport?: { transient_retries: number; retried_calls: number } };
    if (!manifest.transport) continue;
    total.transient_retries += manifest.transport.transient_retries;
    total.retried_calls += manifest.transport.retried_calls;
    total.runs += 1;
  }
  return total;
}

/** Resolves once `condition` holds (polled every 2 ms), or rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = budget(60_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Calls llama-server's log shows started and not finished (`processing task` − `stop processing`). */
export function inFlight(log: string): number {
  const count = (re: RegExp) => log.split("\n").filter((l) => re.test(l)).length;
  return count(/processing task/) - count(/stop processing/);
}

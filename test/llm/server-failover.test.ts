// Failover over real servers (issue 16 §5): `merit grid` (iterative + reflexion × stream seeds 0, 1 on
// real Spider dev data) runs over two llama-server processes with the openai backend (token-id
// prompts); one server is SIGKILLed mid-run. The grid finishes on the other; no call is lost or made
// twice (every call computed exactly once: computed = rows in the call cache = the undisturbed run's,
// with the same keys), and every run file equals the undisturbed grid's byte for byte. Skips with a
// message when llama-server is not built.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../../lib/cli/run.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir, TINY_QWEN } from "../helpers/run-fixture.ts";

const METHODS = "iterative,reflexion";
const SEEDS = "0,1";
const STREAMS = ["iterative-s0", "iterative-s1", "reflexion-s0", "reflexion-s1"];
const RUN_FILES = ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json", "config.json"];
let root: string;
let a: LlamaServer;
let b: LlamaServer;
let initialCache: string;

function writeConfig(name: string): string {
  const path = join(root, `${name}.json`);
  writeFileSync(path, JSON.stringify({
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: initialCache,
    // Relative, so config.json (the run identity) is the same for both grids; each runs in its own cwd.
    call_cache: "llm-calls.sqlite",
    max_repair_steps: 2,
    model: { backend: "openai", engine: "llama.cpp", path: TINY_QWEN, base_urls: [a.url, b.url], requests_per_url: 2 },
    decoding: { max_output_tokens: 16 },
  }));
  return path;
}

function cacheRows(path: string): string[] {
  if (!existsSync(path)) return [];
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT key FROM calls ORDER BY key").all().map((r) => (r as { key: string }).key);
  } finally {
    db.close();
  }
}

/** Runs `merit grid` in process with `cwd` as working directory; returns exit code and stderr lines. */
async function grid(name: string, whileRunning?: (cache: string) => Promise<void>): Promise<{ code: number; err: string[]; cache: string; out: string }> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const err: string[] = [];
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const config = writeConfig(name);
    const running = gridCommand.run(["--config", config, "--methods", METHODS, "--seeds", SEEDS, "--limit", "5", "--out", join(dir, "runs")], { out: () => {}, err: (l) => err.push(l) });
    if (whileRunning) await whileRunning(join(dir, "llm-calls.sqlite"));
    return { code: await running, err, cache: join(dir, "llm-calls.sqlite"), out: join(dir, "runs") };
  } finally {
    process.chdir(cwd);
  }
}

describe.skipIf(LLAMA_SERVER_SKIP !== null)("a grid over two llama-servers, one SIGKILLed mid-run", () => {
  beforeAll(async () => {
    root = tempDir("server-failover");
    const dataset = await loadSpider();
    const oracle = spiderOracle(dataset);
    // Every initial SQL is "" (an execution error scored without a database): every query repairs.
    initialCache = (await cacheFromChosenSql(dataset, oracle, new Map(), root)).path;
    await oracle.close();
    [a, b] = await Promise.all([startLlamaServer({ model: TINY_QWEN, parallel: 2 }), startLlamaServer({ model: TINY_QWEN, parallel: 2 })]);
  }, 180_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it("finishes on the surviving server with every call made once and outputs identical to an undisturbed grid", async () => {
    const reference = await grid("undisturbed");
    expect(reference.code, reference.err.join("\n")).toBe(0);
    const referenceKeys = cacheRows(reference.cache);
    expect(referenceKeys.length).toBeGreaterThan(20);

    let killedAt = -1;
    let inFlightOnA = 0;
    const disturbed = await grid("disturbed", async (cache) => {
      // SIGKILL server A once 6 calls are stored and its log shows a task started but not finished.
      const count = (re: RegExp) => a.log().split("\n").filter((l) => re.test(l)).length;
      for (;;) {
        inFlightOnA = count(/processing task/) - count(/stop processing/);
        if (cacheRows(cache).length >= 6 && inFlightOnA > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      killedAt = cacheRows(cache).length;
      a.kill("SIGKILL");
      await a.exited;
    });
    expect(disturbed.code, disturbed.err.join("\n")).toBe(0);
    expect(killedAt).toBeGreaterThanOrEqual(6);
    expect(killedAt).toBeLessThan(referenceKeys.length);
    expect(inFlightOnA).toBeGreaterThan(0);

    // No call lost or made twice: the call cache computed each distinct call once, the same calls.
    const keys = cacheRows(disturbed.cache);
    expect(keys).toEqual(referenceKeys);
    const computed = (lines: string[]) => Number(/LLM calls: (\d+) computed, (\d+) from the call cache/.exec(lines.join("\n"))?.[1]);
    expect(computed(disturbed.err)).toBe(keys.length);
    expect(computed(reference.err)).toBe(referenceKeys.length);

    // Outputs identical to the undisturbed grid, file by file.
    for (const stream of STREAMS) {
      for (const file of RUN_FILES) {
        const path = join(stream, file);
        if (!existsSync(join(reference.out, path))) continue;
        expect(readFileSync(join(disturbed.out, path), "utf8"), path).toBe(readFileSync(join(reference.out, path), "utf8"));
      }
      expect(readFileSync(join(disturbed.out, stream, "trajectories.jsonl"), "utf8").split("\n").filter(Boolean)).toHaveLength(5);
    }
    console.log(`failover: server A SIGKILLed with ${inFlightOnA} call(s) in flight after ${killedAt} of ${keys.length} calls; the grid finished on server B`);
  }, 600_000);
});

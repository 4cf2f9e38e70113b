// Experiment runs, the transport record (lib/experiment/run.ts `transport`; issue 23 §2): a scripted
// iterative run whose backend reports transient retries (GenerateResult `retries`, as the server
// backends do) writes the same trajectories, prompts, metrics and config as one whose backend reports
// none; only manifest.json `transport` (the retries summed, and the calls they delayed) differs, it is
// absent without retries, a `--resume` keeps it, and `merit report` shows it in a note and in its own
// manifest. Runs without a server, so the record is tested wherever the suite runs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { scenarioInitialSql, scenarioScript, SCENARIO_LIMIT, SCENARIO_SEED } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

const COMPARED = ["trajectories.jsonl", "prompts.jsonl", "metrics.json", "config.json"];
let dataset: Dataset;
let oracle: Oracle;
let root: string;
let cache: InitialCache;
let cachePath: string;

/** The scripted backend, every second call reporting `retries` transient failures before its answer. */
function retrying(inner: ScriptedBackend, retries: number): ChatBackend {
  let n = 0;
  return {
    identity: inner.identity,
    async generate(request) {
      const result = await inner.generate(request);
      return n++ % 2 === 0 ? { ...result, retries } : result;
    },
    close: () => inner.close(),
  };
}

async function run(outDir: string, backend: ChatBackend, resume = false): Promise<void> {
  await runExperiment({
    spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: cachePath }), method: "iterative", seed: SCENARIO_SEED, limit: SCENARIO_LIMIT },
    method: getMethod("iterative"),
    dataset,
    initialCache: cache,
    outDir,
    resume,
    services: { backend, oracle },
  });
}

const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Record<string, unknown>;

beforeAll(async () => {
  root = tempDir("run-transport");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  ({ cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root));
}, budget(120_000));
afterAll(async () => {
  await oracle?.close();
});

describe("manifest.json transport", () => {
  it("records retried transient failures outside the outputs; merit report notes them", async () => {
    const calm = join(root, "calm");
    const bumpy = join(root, "bumpy");
    await run(calm, new ScriptedBackend(scenarioScript(dataset)));
    const inner = new ScriptedBackend(scenarioScript(dataset));
    await run(bumpy, retrying(inner, 2));
    const calls = inner.calls.length;
    expect(calls).toBeGreaterThan(1);

    for (const file of COMPARED) expect(readFileSync(join(bumpy, file), "utf8"), file).toBe(readFileSync(join(calm, file), "utf8"));
    expect(manifest(calm).transport).toBeUndefined();
    const retriedCalls = Math.ceil(calls / 2);
    expect(manifest(bumpy).transport).toEqual({ transient_retries: 2 * retriedCalls, retried_calls: retriedCalls });
    // A completed run with a transport record resumes (nothing left to do), keeps its outputs and its record.
    await run(bumpy, new ScriptedBackend(scenarioScript(dataset)), true);
    for (const file of COMPARED) expect(readFileSync(join(bumpy, file), "utf8"), file).toBe(readFileSync(join(calm, file), "utf8"));
    expect(manifest(bumpy).transport).toEqual({ transient_retries: 2 * retriedCalls, retried_calls: retriedCalls });

    const report = async (dir: string) => {
      const lines: string[] = [];
      const dest = join(root, `${dir}-report`);
      const code = await reportCommand.run([join(root, dir), "--out", dest, "--resamples", "50", "--no-figures"], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
      expect(code, lines.join("\n")).toBe(0);
      return { text: lines.join("\n"), table1: readFileSync(join(dest, "tables", "table1.md"), "utf8"), manifest: JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")) as Record<string, unknown> };
    };
    const plain = await report("calm");
    expect(plain.text).not.toContain("Server transport");
    expect(plain.manifest.transport).toBeUndefined();
    const noted = await report("bumpy");
    const note = `Server transport: ${2 * retriedCalls} transient failure(s) (connection errors, timeouts, 408/429/503, a first 5xx) were retried for ${retriedCalls} call(s) in 1 of 1 runs`;
    expect(noted.text).toContain(note);
    expect(noted.table1).toContain(note);
    expect(noted.manifest.transport).toEqual({ transient_retries: 2 * retriedCalls, retried_calls: retriedCalls, runs: 1 });
  }, budget(120_000));
});

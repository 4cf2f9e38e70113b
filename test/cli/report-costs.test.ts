// Tests the full cost accounting (issue 29 §4): a memory method's run records its measured retrieval
// and memory wall time in manifest.json `timing` (outside its identity: a resume does not compare it,
// a memoryless run has none), and `merit report --costs` writes the cost-by-kind table — tokens and
// calls by call kind, embedding calls, retrieval and memory ms per query — for the paper's methods too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { RESUMABLE_MANIFEST_FIELDS } from "../../lib/experiment/run.ts";
import { budget } from "../helpers/budget.ts";
import { closeScenario, openScenario, runScenario, SCENARIO_LIMIT, type ScenarioFixture } from "../helpers/scripted-scenario.ts";

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("report-costs");
  for (const method of ["merit", "iterative"]) await runScenario({ method, dataset: fx.dataset, oracle: fx.oracle, cache: fx.cache, cachePath: fx.cachePath, outDir: join(fx.root, "runs", `${method}-s0`) });
}, budget(120_000));
afterAll(() => closeScenario(fx));

const manifest = (m: string) => JSON.parse(readFileSync(join(fx.root, "runs", `${m}-s0`, "manifest.json"), "utf8"));

describe("timing and the cost table", () => {
  it("a memory method's manifest records its retrieval and memory wall time; a memoryless one has none", () => {
    const t = manifest("merit").timing;
    expect(t.episodes).toBe(SCENARIO_LIMIT);
    expect(t.retrieval_ms).toBeGreaterThanOrEqual(0);
    expect(t.memory_ms).toBeGreaterThanOrEqual(0);
    expect(manifest("iterative").timing).toBeUndefined();
    expect(RESUMABLE_MANIFEST_FIELDS.has("timing")).toBe(true); // measured, never part of what a resume compares
  });

  it("merit report --costs writes the cost-by-kind table; without it the paper's report has none", async () => {
    const quiet = { out: () => undefined, err: () => undefined };
    const dest = join(fx.root, "report");
    expect(await main(["report", join(fx.root, "runs"), "--out", dest, "--costs"], quiet)).toBe(0);
    const md = readFileSync(join(dest, "tables", "cost-by-kind.md"), "utf8");
    expect(md).toMatch(/^\| Dataset \| Method \| initial_cache tokens \| repair tokens \| LLM tokens \(all kinds\) \| Embedding calls \| Embedding tokens \| Retrieval ms \| Memory ms \|$/m);
    // MERIT's test-double embedder cannot count tokens (—); Iterative embeds nothing (0.0 tokens) and has no memory timing
    expect(md).toMatch(/^\| Spider \| MERIT \|( [\d.]+ \|){4} — \| [\d.]+ \| [\d.]+ \|$/m);
    expect(md).toMatch(/^\| Spider \| Iterative \|( [\d.]+ \|){4} 0\.0 \| — \| — \|$/m);
    const plain = join(fx.root, "report-plain");
    expect(await main(["report", join(fx.root, "runs"), "--out", plain], quiet)).toBe(0);
    expect(() => readFileSync(join(plain, "tables", "cost-by-kind.md"))).toThrow();
  }, budget(120_000));
});

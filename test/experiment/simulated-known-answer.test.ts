// Known-answer studies on the simulated engine (issue 38 §2; docs/METHOD.md "Simulated engine"): MERIT
// and Iterative over three stream orders of the same 24 Spider queries that DeepSeek-Coder-7B's bundled
// predictions fail, K = 3, a base repair probability of 0.1 per step. With the memory effects planted at zero, MERIT − Iterative's
// paired query-cluster interval covers 0; with a planted effect of a relevant precedent, it lies above 0
// and MERIT's repair curve rises along the stream. On the planted runs: `merit audit` finds nothing,
// and still flags a plugin method that copies the gold into its memory; `merit report` refuses the
// simulated runs beside a run of a model (one line, exit 2).
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairedClusterBootstrap } from "../../lib/analysis/bootstrap.ts";
import { methodCurves } from "../../lib/analysis/learning-curves.ts";
import { readReportInputs } from "../../lib/analysis/report-inputs.ts";
import { main } from "../../lib/cli.ts";
import type { Dataset } from "../../lib/data/index.ts";
import { auditRun } from "../../lib/experiment/audit.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import { readTrajectories } from "../../lib/experiment/run-dir.ts";
import { registerMethod } from "../../lib/methods/registry.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { budget } from "../helpers/budget.ts";
import { deepseekFixture, SPIDER_DIR } from "../helpers/run-fixture.ts";

const LIMIT = 24;
const SEEDS = [0, 1, 2];
const ZERO = { relevant_precedent: 0, misleading_precedent: 0, negative_precedent: 0, reflection: 0, lesson: 0 };

let dataset: Dataset;
let oracle: Oracle;
let root: string;
let initial: string;
beforeAll(async () => {
  ({ dataset, oracle, root, initial } = await deepseekFixture("known-answer"));
});
afterAll(async () => {
  await oracle.close();
});

/** MERIT and the other methods over seeds 0-2 on the simulated engine with `effects` planted; returns the grid folder. */
async function grid(name: string, effects: Record<string, number>, methods = ["merit", "iterative"]): Promise<string> {
  const params = join(root, `${name}.json`);
  // a hard world (10% per repair step, little spread in difficulty), so what memory adds shows along the stream
  const base = Object.fromEntries(["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"].map((t) => [t, 0.1]));
  writeFileSync(params, JSON.stringify({ seed: 3, repair: { base, difficulty_sd: 0.5, effects } }));
  const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initial, call_cache: join(root, `${name}.sqlite`), max_repair_steps: 3, subset: { rule: "initially_failed", initially_correct: 0 }, model: { backend: "simulated", simulation: params }, embedder: { backend: "simulated" } });
  const out = join(root, name);
  await runGrid(config, planStreams(methods, SEEDS, out), { limit: LIMIT });
  return out;
}

/** outcomes[q][s]: the final correctness of query q (sorted ids) under stream order s. */
function outcomes(dir: string, method: string): number[][] {
  const bySeed = SEEDS.map((s) => new Map(readTrajectories(join(dir, `${method}-s${s}`)).map((t) => [t.query_id, t.final_correct ? 1 : 0])));
  return [...bySeed[0].keys()].sort().map((q) => bySeed.map((m) => m.get(q)!));
}

const delta = (dir: string) => pairedClusterBootstrap(outcomes(dir, "merit"), outcomes(dir, "iterative"), { resamples: 2000, seed: 0 });

describe("known-answer studies on the simulated engine", () => {
  it(
    "memory effects planted at zero: MERIT − Iterative's 95% interval covers 0",
    async () => {
      const d = delta(await grid("null", ZERO));
      expect(d.lo).toBeLessThanOrEqual(0);
      expect(d.hi).toBeGreaterThanOrEqual(0);
    },
    budget(60_000),
  );

  it(
    "a planted precedent effect: MERIT − Iterative is positive and MERIT's repair curve rises along the stream; the audit finds nothing, and flags a plugin that copies the gold; the report refuses a mix",
    async () => {
      const dir = await grid("planted", { ...ZERO, relevant_precedent: 3 });
      const d = delta(dir);
      expect(d.delta).toBeGreaterThan(0);
      expect(d.lo).toBeGreaterThan(0);
      const runs = readReportInputs(SEEDS.map((s) => join(dir, `merit-s${s}`))).runs;
      const repair = methodCurves(runs, { resamples: 200 }).repair.mean;
      const early = repair[Math.floor(LIMIT / 4) - 1];
      expect(repair[LIMIT - 1]).toBeGreaterThan(early + 10); // pp
      for (const s of SEEDS) expect(auditRun(join(dir, `merit-s${s}`), dataset).violations).toEqual([]);

      // a plugin method whose memory copies its query's gold SQL: the simulated SQL is never the gold's text, so the audit sees it
      const gold = new Map(dataset.examples.map((e) => [e.id, e.goldSql]));
      registerMethod({
        name: "gold_copier_test",
        description: "test: writes its query's gold SQL into memory (a leak the audit must flag)",
        hooks: { memory: { name: "gold_copier_test", heading: "GOLD", write: (episode) => [{ kind: "leak", text: gold.get(episode.queryId)! }], retrieve: () => [] } },
      });
      const leaky = await grid("leaky", { ...ZERO, relevant_precedent: 3 }, ["gold_copier_test"]);
      const violations = auditRun(join(leaky, "gold_copier_test-s0"), dataset).violations;
      expect(violations.length).toBeGreaterThan(0);
      expect(new Set(violations.map((v) => v.kind))).toEqual(new Set(["gold-in-memory"]));

      // a run recorded as made with a model beside the simulated runs: one line, exit 2
      const fake = join(root, "fake-real", "iterative-s0");
      cpSync(join(dir, "iterative-s0"), fake, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(fake, "manifest.json"), "utf8"));
      manifest.backend = { ...manifest.backend, kind: "llama.cpp", model: "qwen.gguf" };
      writeFileSync(join(fake, "manifest.json"), JSON.stringify(manifest));
      const err: string[] = [];
      expect(await main(["report", join(dir, "merit-s0"), fake, "--out", join(root, "mixed-report")], { out: () => {}, err: (l) => err.push(l) })).toBe(2);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/^merit report: the runs mix the simulated engine \(1 run\(s\), e\.g\. .*merit-s0\) with a model \(1 run\(s\), e\.g\. .*fake-real.*\): planted effects cannot be compared with measured ones; report them separately$/);
    },
    budget(90_000),
  );
});

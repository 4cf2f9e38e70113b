// Shorter runs read off one long run, against real shorter runs (issue 37 §2; METHOD.md §13.8): on the
// simulated engine (deterministic in (seed, prompt), as a greedy model), Iterative and Reflexion at
// K = 5 read at K′ = 0, 2 and 4 give, per query and stream order, the outcome and the LLM tokens of a
// run made at that K′ with its own call cache. Then `merit report` on MERIT, a peer, Iterative at K = 3
// and the long arm iterative_long writes the token-matched columns of the peers table (Iterative at
// K = 3 matched at K′ = 3, Δ = 0) and the figure, and refuses a memory method as the long run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefixCurve, prefixEpisode } from "../../lib/analysis/prefix-runs.ts";
import { parseConfig, type ExperimentConfig } from "../../lib/experiment/config.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import { readTrajectories } from "../../lib/experiment/run-dir.ts";
import { registerArm } from "../../lib/experiment/study.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { main } from "../../lib/cli.ts";
import { buildReport } from "../../lib/report/build-report.ts";
import { budget } from "../helpers/budget.ts";
import { overlappingBoxes, svgTextBoxes } from "../helpers/svg-text-boxes.ts";
import { deepseekFixture, SPIDER_DIR } from "../helpers/run-fixture.ts";

const LIMIT = 20;
const SEEDS = [0, 1];
const LONG_K = 5;
/** K of the report's long arm: long enough that its LLM tokens per query reach those of MERIT and the peer at K = 3 (their prompts are longer). */
const REPORT_LONG_K = 15;

let oracle: Oracle;
let root: string;
let initial: string;
beforeAll(async () => {
  ({ oracle, root, initial } = await deepseekFixture("prefix-runs"));
});
afterAll(async () => {
  await oracle.close();
});

/** The simulated engine's config at K with its own call cache (nothing answered from another run's calls). */
function config(k: number, cache: string): ExperimentConfig {
  return parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initial, call_cache: join(root, `${cache}.sqlite`), max_repair_steps: k, subset: { rule: "initially_failed", initially_correct: 4 }, model: { backend: "simulated", simulation: "configs/simulated-engine.json" }, embedder: { backend: "simulated" } });
}

const bySource = (dir: string) => readTrajectories(dir).sort((x, y) => x.source_index - y.source_index);
const tokens = (t: { prompt_tokens: number[]; output_tokens: number[] }) => t.prompt_tokens.reduce((s, v) => s + v, 0) + t.output_tokens.reduce((s, v) => s + v, 0);

describe("prefix runs on the simulated engine", () => {
  it(
    "Iterative and Reflexion at K = 5 read at K′ = 0, 2, 4 equal real runs at K′, query by query: outcome and LLM tokens",
    async () => {
      const long = join(root, "long");
      await runGrid(config(LONG_K, "long"), planStreams(["iterative", "reflexion"], SEEDS, long), { limit: LIMIT });
      let repairedBeyond = 0;
      for (const kp of [0, 2, 4]) {
        const short = join(root, `k${kp}`);
        await runGrid(config(kp, `k${kp}`), planStreams(["iterative", "reflexion"], SEEDS, short), { limit: LIMIT });
        for (const method of ["iterative", "reflexion"]) {
          for (const seed of SEEDS) {
            const longRun = bySource(join(long, `${method}-s${seed}`));
            const shortRun = bySource(join(short, `${method}-s${seed}`));
            expect(shortRun.map((t) => t.query_id)).toEqual(longRun.map((t) => t.query_id));
            const read = longRun.map((t) => prefixEpisode(t, LONG_K));
            expect(read.map((e) => e.correct[kp])).toEqual(shortRun.map((t) => t.final_correct));
            expect(read.map((e) => e.tokens[kp])).toEqual(shortRun.map(tokens));
            repairedBeyond += longRun.filter((t, q) => t.final_correct && !shortRun[q].final_correct).length;
          }
        }
        // EX of the K′ run is the curve's EX at K′
        const curve = prefixCurve(SEEDS.map((s) => ({ trajectories: readTrajectories(join(long, `iterative-s${s}`)), k: LONG_K })));
        const ex = SEEDS.map((s) => (100 * bySource(join(short, `iterative-s${s}`)).filter((t) => t.final_correct).length) / LIMIT);
        expect(curve.ex[kp]).toBeCloseTo((ex[0] + ex[1]) / 2, 10);
      }
      // the check has teeth: the long run repairs queries the short ones do not
      expect(repairedBeyond).toBeGreaterThan(0);
    },
    budget(120_000),
  );

  it(
    "merit report with the long arm iterative_long: the peers table's token-matched columns, the figure, the manifest; a memory method as the long run is refused",
    async () => {
      const dir = join(root, "report-runs");
      await runGrid(config(3, "main"), planStreams(["merit", "dynamic_cheatsheet", "iterative"], SEEDS, dir), { limit: LIMIT });
      registerArm("iterative_long", { method: "iterative", max_repair_steps: REPORT_LONG_K }, "prefix-runs test", { max_repair_steps: REPORT_LONG_K });
      await runGrid(config(REPORT_LONG_K, "main"), planStreams(["iterative_long"], SEEDS, dir), { limit: LIMIT });
      const out = join(root, "report");
      const result = await buildReport([dir], { out, reference: "merit", peers: ["dynamic_cheatsheet", "iterative"], conditions: ["max_repair_steps"], curves: false, bootstrap: { resamples: 200 } });
      const peers = result.tables.find((t) => t.id === "peers")!;
      expect(peers.columns).toContain("iterative_long K′ (token-matched)");
      expect(peers.columns).toContain("Δ method − iterative_long@K′ (pp)");
      const dc = peers.data.find((r) => r.method === "dynamic_cheatsheet")!;
      // at K = 15 Iterative spends the peer's tokens: a K′* strictly inside, and Δ = EX(peer) − the curve's EX there
      expect(dc.k_token_matched).toBeGreaterThan(0);
      expect(dc.k_token_matched).toBeLessThan(REPORT_LONG_K);
      expect(dc.delta_token_matched as number).toBeCloseTo((dc.ex_mean as number) - (dc.ex_token_matched as number), 8);
      expect(dc.lo_token_matched as number).toBeLessThanOrEqual(dc.delta_token_matched as number);
      expect(peers.notes.some((n) => n.includes("embedding tokens not counted"))).toBe(true);
      // the real Iterative run at K = 3 sits on the curve: token-matched at K′ = 3 exactly, Δ = 0 with a zero-width interval
      const it3 = peers.data.find((r) => r.method === "iterative")!;
      expect(it3).toMatchObject({ k_token_matched: 3, delta_token_matched: 0, lo_token_matched: 0, hi_token_matched: 0 });
      // the figure: its labels never overprint (estimated text boxes of the rendered SVG)
      const svg = readFileSync(join(out, "figures", "token-matched.svg"), "utf8");
      expect(svg).toContain("dynamic_cheatsheet");
      expect(overlappingBoxes(svgTextBoxes(svg, /mark-text role-mark/))).toEqual([]);
      expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).token_matched).toEqual({ method: "iterative_long", k: { spider: REPORT_LONG_K } });
      // `merit report --long-iterative` names a method of the runs: one line, exit 2
      const err: string[] = [];
      expect(await main(["report", dir, "--out", join(root, "report-cli"), "--conditions", "max_repair_steps", "--no-figures", "--no-curves", "--resamples", "20", "--long-iterative", "iterative_lng"], { out: () => {}, err: (l) => err.push(l) })).toBe(2);
      expect(err.join("\n")).toMatch(/--long-iterative: no run of method "iterative_lng" \(did you mean "iterative_long"\?\)/);
      await expect(buildReport([dir], { out: join(root, "report-bad"), reference: "merit", conditions: ["max_repair_steps"], curves: false, figures: false, bootstrap: { resamples: 50 }, longIterative: "dynamic_cheatsheet" })).rejects.toThrow(/dynamic_cheatsheet keeps a memory across episodes, so a run at a smaller K is not a prefix of its long run/);
    },
    budget(120_000),
  );
});

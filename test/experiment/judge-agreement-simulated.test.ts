// End to end on the simulated engine (issue 37 §1): ReasoningBank and Iterative over two stream
// orders of 40 Spider queries (30 the bundled predictions fail, 10 they get right), K = 3. The
// engine's judge has a planted sensitivity and specificity (configs/simulated-engine.json: 0.85 and
// 0.8); `merit report` writes tables/judge-agreement.{csv,md,tex} with ReasoningBank's row — the
// judge's verdicts against the oracle's verdict of each final attempt — and no row for Iterative,
// which does not judge. The rates are only checked loosely (near the planted ones; 80 episodes).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import type { Dataset } from "../../lib/data/index.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import { readTrajectories } from "../../lib/experiment/run-dir.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { budget } from "../helpers/budget.ts";
import { cacheFromPredictionsFile, DEEPSEEK_PREDICTIONS, loadSpider, SPIDER_DIR, spiderOracle, tempDir } from "../helpers/run-fixture.ts";

const SEEDS = [0, 1];

let dataset: Dataset;
let oracle: Oracle;
let root: string;
beforeAll(async () => {
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  root = tempDir("judge-agreement");
});
afterAll(async () => {
  await oracle.close();
});

describe("judge-agreement table on the simulated engine", () => {
  it(
    "merit report writes ReasoningBank's judge against the oracle, near the engine's planted sensitivity and specificity",
    async () => {
      const initial = join(root, "initial.json");
      await cacheFromPredictionsFile(dataset, oracle, DEEPSEEK_PREDICTIONS, initial);
      const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initial, call_cache: join(root, "calls.sqlite"), max_repair_steps: 3, subset: { rule: "initially_failed", initially_correct: 10 }, model: { backend: "simulated" }, embedder: { backend: "simulated" } });
      const grid = join(root, "grid");
      await runGrid(config, planStreams(["iterative", "reasoning_bank"], SEEDS, grid), { limit: 40 });
      // every ReasoningBank episode records its judge's verdict; Iterative's none
      for (const s of SEEDS) {
        expect(readTrajectories(join(grid, `reasoning_bank-s${s}`)).every((t) => typeof t.judged_success === "boolean")).toBe(true);
        expect(readTrajectories(join(grid, `iterative-s${s}`)).every((t) => t.judged_success === undefined)).toBe(true);
      }
      const out = join(root, "report");
      const err: string[] = [];
      const runs = SEEDS.flatMap((s) => ["iterative", "reasoning_bank"].map((m) => join(grid, `${m}-s${s}`)));
      expect(await main(["report", "--runs", runs.join(","), "--out", out, "--no-curves"], { out: () => {}, err: (l) => err.push(l) })).toBe(0);
      for (const ext of ["csv", "md", "tex"]) expect(existsSync(join(out, "tables", `judge-agreement.${ext}`))).toBe(true);
      const lines = readFileSync(join(out, "tables", "judge-agreement.csv"), "utf8").trim().split("\n");
      expect(lines[0]).toBe("Dataset,Method,Orders,Episodes judged,Agreement (%),Sensitivity (%),Specificity (%),True accepts,False accepts,False rejects,True rejects");
      expect(lines).toHaveLength(2);
      const [dataset_, method, orders, episodes, agreement, sensitivity, specificity, ...counts] = lines[1].split(",");
      expect([dataset_, method, orders, episodes]).toEqual([expect.stringMatching(/spider/i), expect.stringMatching(/reasoning/i), "2", "80"]);
      expect(counts.map(Number).reduce((a, b) => a + b, 0)).toBe(80);
      // planted 85% / 80%: loose bounds, 80 episodes over two orders
      for (const rate of [agreement, sensitivity, specificity]) {
        expect(Number(rate)).toBeGreaterThan(55);
        expect(Number(rate)).toBeLessThanOrEqual(100);
      }
      expect(readFileSync(join(out, "tables", "judge-agreement.md"), "utf8")).toMatch(/oracle's verdict of the same final attempt/);
    },
    budget(120_000),
  );
});

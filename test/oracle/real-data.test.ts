/**
 * Oracle calibration on the bundled real data (METHOD.md §11.6, §11.2): the three public Spider dev
 * prediction files must score exactly the official evaluator's totals under `official` (434 / 712 /
 * 832) and MERIT's under `merit` (416 / 709 / 814) over the 972 executable questions, with the 62
 * `wta_1` questions NO_DATABASE; BIRD without databases is all NO_DATABASE.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../lib/data/index.ts";
import type { Dataset } from "../../lib/data/types.ts";
import { evaluatePredictions, exLine } from "../../lib/oracle/evaluate.ts";
import { readPredictions, type PredictionEncoding } from "../../lib/oracle/predictions.ts";
import type { SpiderProtocol } from "../../lib/oracle/protocol.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// [file, encoding, correct under official, correct under merit] — METHOD.md §11.6.
const FILES: Array<[string, PredictionEncoding, number, number]> = [
  ["spider_dev__Llama3-8B.sql", "latin1", 434, 416],
  ["spider_dev__Deepseek-Coder-7B.sql", "utf8", 712, 709],
  ["spider_dev__SFT_CodeS_7B.sql", "utf8", 832, 814],
];
const CASES = FILES.flatMap(([file, encoding, official, merit]) => [
  [file, encoding, "official", official] as const,
  [file, encoding, "merit", merit] as const,
]);

describe("calibration on Spider dev", () => {
  let spider: Dataset;
  beforeAll(async () => {
    spider = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
  });

  it.each(CASES)("%s (%s) under %s: %i correct", async (file, encoding: PredictionEncoding, protocol: SpiderProtocol, correct) => {
    const predictions = readPredictions(join(ROOT, "data/predictions", file), encoding, spider.examples.length);
    const { verdicts, summary } = await evaluatePredictions(spider, predictions, { protocol, timeoutMs: budget(30_000), jobs: 2 });
    expect(verdicts).toHaveLength(1034);
    expect(summary.counts.NO_DATABASE).toBe(62);
    expect(summary.missing_databases).toEqual({ wta_1: 62 });
    expect(summary.counts.GOLD_ERROR).toBe(0);
    expect(summary.n).toBe(972);
    expect(summary.correct).toBe(correct);
    const c = summary.counts;
    expect(c.CORRECT + c.DENOTATION_MISMATCH + c.EXECUTION_ERROR + c.TIMEOUT).toBe(972);
    // EX = 100 · correct / 972, rounded to 2 decimals (e.g. 43400/972 = 44.650… → 44.65).
    expect(exLine(summary)).toBe(`EX ${((100 * correct) / 972).toFixed(2)} (${correct}/972)`);
    verdicts.forEach((v, i) => {
      expect(v.status === "NO_DATABASE").toBe(spider.examples[i].dbId === "wta_1");
      if (v.status === "EXECUTION_ERROR" || v.status === "TIMEOUT") expect(v.dbError).toBeTruthy();
      if (v.status === "CORRECT" || v.status === "DENOTATION_MISMATCH") expect(v.dbError).toBeNull();
    });
  });
});

describe("BIRD dev without databases", () => {
  it("scores every example NO_DATABASE", async () => {
    const bird = await loadDataset({ name: "bird", dir: join(ROOT, "data/bird") });
    expect(bird.databases.size).toBe(0);
    const predictions = readPredictions(join(ROOT, "data/predictions/bird_dev__SFT_CodeS_7B_EK.sql"), "utf8", bird.examples.length);
    const { verdicts, summary } = await evaluatePredictions(bird, predictions, { protocol: "official", timeoutMs: budget(30_000), jobs: 2 });
    expect(verdicts).toHaveLength(1534);
    expect(verdicts.every((v) => v.status === "NO_DATABASE" && v.dbExecutions === 0)).toBe(true);
    expect(summary.n).toBe(0);
    expect(summary.correct).toBe(0);
    expect(summary.counts.NO_DATABASE).toBe(1534);
    expect(Object.values(summary.missing_databases).reduce((a, b) => a + b, 0)).toBe(1534);
    expect(summary.protocol).toBe("bird-set-v1");
  });
});

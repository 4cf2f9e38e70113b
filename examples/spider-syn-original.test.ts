// Tests examples/spider-syn-original.ts from outside lib/: the plugin's dataset loads from its
// default folder (which holds no files: every path reuses Spider-Syn's and Spider's), has Spider-Syn's
// 1,034 records with the original question in place of the synonym one and nothing else changed,
// parses as a config, and its gold SQL scores 100% of the executable questions of a 120-question slice.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../lib/data/dataset.ts";
import type { Dataset } from "../lib/data/types.ts";
import { parseConfig } from "../lib/experiment/config.ts";
import { Oracle } from "../lib/oracle/oracle.ts";
import "./spider-syn-original.ts";
import { budget } from "../test/helpers/budget.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RAW = JSON.parse(readFileSync(join(ROOT, "data/spider-syn/dev.json"), "utf8")) as Array<{ db_id: string; SpiderQuestion: string; SpiderSynQuestion: string; query: string }>;

describe("dataset spider-syn-original", () => {
  let control: Dataset;
  let syn: Dataset;
  beforeAll(async () => {
    [control, syn] = await Promise.all([loadDataset({ name: "spider-syn-original", dir: join(ROOT, "data/spider-syn-original") }), loadDataset({ name: "spider-syn", dir: join(ROOT, "data/spider-syn") })]);
  });

  it("is Spider-Syn with the original questions: same records, gold, databases and schemas", () => {
    expect(control.examples).toHaveLength(1034);
    expect(control.examples.map((e) => e.question)).toEqual(RAW.map((r) => r.SpiderQuestion.trim()));
    expect(control.examples.map(({ question: _q, ...rest }) => rest)).toEqual(syn.examples.map(({ question: _q, ...rest }) => rest));
    const reworded = control.examples.filter((e, i) => e.question !== syn.examples[i].question).length;
    expect(reworded).toBe(RAW.filter((r) => r.SpiderQuestion.trim() !== r.SpiderSynQuestion.trim()).length);
    expect(reworded).toBeGreaterThan(800);
    expect([...control.databases.keys()].sort()).toEqual([...syn.databases.keys()].sort());
    expect(control.schemas).toEqual(syn.schemas);
    expect(parseConfig({ dataset: "spider-syn-original", data_dir: "data/spider-syn-original", initial_cache: "x" }).dataset).toBe("spider-syn-original");
  });

  it("its gold SQL scores every executable question of a slice CORRECT", async () => {
    const oracle = new Oracle({ dataset: "spider-syn-original", databases: control.databases, protocol: "official", timeoutMs: 30_000, jobs: 1 });
    try {
      const slice = control.examples.filter((_e, i) => i % 9 === 0).slice(0, 120);
      const verdicts = await Promise.all(slice.map((e) => oracle.score(e, e.goldSql)));
      const executable = verdicts.filter((v) => v.status !== "NO_DATABASE");
      expect(executable.length).toBeGreaterThan(100);
      expect(executable.every((v) => v.status === "CORRECT")).toBe(true);
    } finally {
      await oracle.close();
    }
  }, budget(120_000));
});

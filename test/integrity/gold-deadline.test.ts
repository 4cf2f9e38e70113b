// Deadlines too short to score anything (README "Reliability"; lib/oracle/evaluate.ts,
// lib/repair/episode.ts, lib/experiment/initial-cache.ts, config.ts): a gold query that runs past
// the SQL deadline fails because of the deadline, not the data, so `merit eval`, a run and the
// initial cache stop with one line naming the deadline and how many, instead of excluding those
// examples from the denominator — unless `merit eval --accept-gold-timeouts` accepts it, and then
// summary.json records it. sql_timeout_s has the same 1 ms minimum as --timeout.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";
import { cliLine, openScenarioIn, refusal, runScenarioInto, type Scenario } from "./fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("gold-deadline");
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A recursive CTE that never ends: its gold query always runs past any deadline. */
const RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

/** The first 10 Spider dev examples (same tables and databases), example 3's gold the runaway query, and the gold as the predictions file. */
function smallSpider(): { dir: string; gold: string } {
  const dir = join(root, "spider10");
  mkdirSync(dir, { recursive: true });
  const examples = JSON.parse(readFileSync(join(SPIDER_DIR, "dev.json"), "utf8")).slice(0, 10);
  examples[3].query = RUNAWAY;
  writeFileSync(join(dir, "dev.json"), JSON.stringify(examples));
  writeFileSync(join(dir, "tables.json"), readFileSync(join(SPIDER_DIR, "tables.json")));
  symlinkSync(join(SPIDER_DIR, "database"), join(dir, "database"));
  const gold = join(root, "gold10.sql");
  writeFileSync(gold, examples.map((e: { query: string; db_id: string }) => `${e.query}\t${e.db_id}\n`).join(""));
  return { dir, gold };
}

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("`merit eval` with a deadline the gold cannot meet", () => {
  const { dir, gold } = smallSpider();
  const args = ["eval", "--dataset", "spider", "--data", dir, "--pred", gold, "--jobs", "1"];

  it("--timeout 0.001 (the issue's case): one line naming the deadline and how many gold queries timed out, exit 2, nothing written", async () => {
    const out = join(root, "eval-stopped");
    const r = await merit([...args, "--timeout", "0.001", "--out", out]);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err.at(-1)).toMatch(/^merit eval: \d+ of 10 gold queries ran past the SQL deadline of 0\.001 s \(--timeout\), so their examples cannot be scored; raise --timeout \(default 30 s\), or pass --accept-gold-timeouts/);
    expect(existsSync(join(out, "summary.json"))).toBe(false);
  }, budget(120_000));

  it("one gold query that never ends, --timeout 0.5: stopped, naming 1 of 10", async () => {
    const r = await merit([...args, "--timeout", "0.5"]);
    expect(r.code).toBe(2);
    expect(r.err.at(-1)).toMatch(/^merit eval: 1 of 10 gold queries ran past the SQL deadline of 0\.5 s \(--timeout\)/);
  }, budget(120_000));

  it("--accept-gold-timeouts: scored without it, and summary.json records how many", async () => {
    const out = join(root, "eval-accepted");
    const r = await merit([...args, "--timeout", "0.5", "--accept-gold-timeouts", "--out", out]);
    expect(r.code, r.err.join("\n")).toBe(0);
    expect(r.out.at(-1)).toBe("EX 100.00 (9/9)");
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(summary.gold_timeouts_accepted).toBe(1);
    expect(summary.counts.GOLD_ERROR).toBe(1);
    expect(r.err).toContain("warning: 1 of them ran past the 0.5 s deadline (accepted by --accept-gold-timeouts; recorded in summary.json)");
  }, budget(120_000));
});

describe("sql_timeout_s", () => {
  it("below 1 ms is refused by the config schema, naming the field", () => {
    const base = { dataset: "spider", data_dir: SPIDER_DIR, initial_cache: "x.json" };
    expect(() => parseConfig({ ...base, sql_timeout_s: 1e-7 }, "c.json")).toThrow(/c\.json: invalid config — sql_timeout_s: at least 0\.001 seconds/);
    expect(parseConfig({ ...base, sql_timeout_s: 0.001 }, "c.json").sql_timeout_s).toBe(0.001);
  });

  describe("a run whose deadline the gold cannot meet", () => {
    let s: Scenario;
    let fast: Oracle;
    beforeAll(async () => {
      s = await openScenarioIn(root);
      fast = new Oracle({ dataset: "spider", databases: s.dataset.databases, protocol: "merit", timeoutMs: 1e-7 * 1000, jobs: 1 });
    }, budget(180_000));
    afterAll(async () => {
      await s?.oracle.close();
      await fast?.close();
    });

    it("stops with one line naming sql_timeout_s (not \"it should have been dropped\")", async () => {
      const error = await refusal(runScenarioInto({ ...s, oracle: fast }, join(root, "run")));
      const printed = cliLine(error);
      expect(printed?.exitCode).toBe(2);
      expect(printed?.line).toMatch(/^query \S+: its gold query ran past the SQL deadline \(sql_timeout_s in the config\), so the query cannot be scored; raise sql_timeout_s/);
    }, budget(120_000));
  });
});

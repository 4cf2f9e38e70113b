// Tests examples/error-taxonomy.ts from outside lib/ (issue 29 §6): the ordered rules on SQL strings
// (a DBMS error keeps its coarse type), then `merit_fine_types` end to end on the scripted five-query
// scenario (test/helpers/scripted-scenario.ts: 426 correct, A fails and is repaired at step 3, B is
// never repaired — its repairs execute with too few rows, C is repaired at step 1, 278 correct): the
// trajectories, the memory entries and the retrieval log carry the fine labels, the hard type filter
// pools by them, the run is causally clean, and Table 5 and the failure figure list them for a run
// whose initial failures are executed wrong answers of each kind.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureComposition } from "../lib/analysis/figure-failures.ts";
import { summarizeRun } from "../lib/analysis/run-summary.ts";
import { failureTable } from "../lib/analysis/tables.ts";
import { auditRun } from "../lib/experiment/audit.ts";
import type { ChatBackend } from "../lib/llm/types.ts";
import { getMethod, loadPlugins, methodTable } from "../lib/methods/index.ts";
import { ERROR_TYPES } from "../lib/plugin.ts";
import { cacheFromChosenSql, readRun } from "../test/helpers/run-fixture.ts";
import { ScriptedBackend } from "../test/helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, scenarioScript, SCENARIO_IDS, runScenarioWith, type ScenarioFixture } from "../test/helpers/scripted-scenario.ts";
import { classifyFine, FINE_TYPES, MISMATCH_TYPES, mismatchType, sqlSkeleton } from "./error-taxonomy.ts";
import { budget } from "../test/helpers/budget.ts";

const PLUGIN = "examples/error-taxonomy.ts";
const METHOD = "merit_fine_types";

const wrong = (sql: string) => classifyFine({ sql, status: "DENOTATION_MISMATCH", dbError: null, executed: true });

describe("the fine rules (SQL only, first match wins)", () => {
  it("splits an executed wrong answer into aggregation, join, filter, projection", () => {
    const cases: [string, string][] = [
      ["SELECT count(*) FROM singer", "Mismatch: aggregation"],
      ["SELECT name FROM t GROUP BY name", "Mismatch: aggregation"],
      ["SELECT name FROM t JOIN u ON t.id = u.tid WHERE x > 1 GROUP BY name HAVING 1", "Mismatch: aggregation"],
      ["select AVG (age) from people where age > 3", "Mismatch: aggregation"],
      ["SELECT name FROM a WHERE id IN (SELECT max(id) FROM b)", "Mismatch: aggregation"],
      ["SELECT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.aid WHERE T2.x = 1", "Mismatch: join"],
      ["SELECT a.name FROM a LEFT OUTER JOIN b ON a.id = b.aid", "Mismatch: join"],
      ["SELECT a.name, b.x FROM a, b WHERE a.id = b.aid", "Mismatch: join"],
      ["SELECT name FROM (SELECT name, age FROM people) AS p, other", "Mismatch: join"],
      ["SELECT name FROM people WHERE name = 'Inner Join'", "Mismatch: filter"],
      ["SELECT name, age FROM people WHERE age > 30 ORDER BY age", "Mismatch: filter"],
      ["SELECT name FROM people WHERE id IN (SELECT pid FROM pets WHERE kind = 'dog')", "Mismatch: filter"],
      ["SELECT name, age FROM people ORDER BY age DESC LIMIT 3", "Mismatch: projection"],
      ['SELECT "count(x)", [group by] FROM people -- WHERE age > 3', "Mismatch: projection"],
      ["SELECT name FROM (SELECT name, age FROM people)", "Mismatch: projection"],
      ["SELECT 'a, b' FROM people /* JOIN x */", "Mismatch: projection"],
      ["SELECT 1", "Mismatch: projection"],
    ];
    for (const [sql, label] of cases) expect(wrong(sql), sql).toBe(label);
    expect(sqlSkeleton("select 'it''s; where' , \"a\"\"b\" from t")).toBe("SELECT 'S' , Q FROM T");
    expect(mismatchType("SELECT max(a, b) FROM t")).toBe("Mismatch: aggregation"); // a rule, not a parser: SQLite's scalar max counts too
  });

  it("a failed execution keeps its coarse DBMS-derived type whatever its SQL", () => {
    const failed = (sql: string, dbError: string, status = "EXECUTION_ERROR") => classifyFine({ sql, status, dbError, executed: false });
    expect(failed("SELECT count(*) FROM t JOIN u WHERE nme = 1", "no such column: nme")).toBe("Schema Linking");
    expect(failed("SELECT Title FROM Cartoon ORDER BY", "incomplete input")).toBe("Syntax");
    expect(failed("SELECT name FROM t WHERE count(*) > 1", "misuse of aggregate: count()")).toBe("Aggregation");
    expect(failed("SELECT * FROM t, u, v", "TIMEOUT", "TIMEOUT")).toBe("Execution");
    expect(failed("SELECT x FROM t WHERE y", "something odd")).toBe("Unknown");
  });

  it("declares every label it returns: §3's types with the four fine ones in Result Mismatch's place", () => {
    expect(FINE_TYPES).toEqual(["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", ...MISMATCH_TYPES, "Unknown"]);
    expect(FINE_TYPES).not.toContain("Result Mismatch");
    for (const t of ERROR_TYPES) if (t !== "Result Mismatch") expect(FINE_TYPES).toContain(t);
  });
});

let fx: ScenarioFixture;
beforeAll(async () => {
  await loadPlugins([PLUGIN]);
  fx = await openScenario("error-taxonomy");
}, budget(120_000));
afterAll(() => closeScenario(fx));

async function run(outDir: string, backend: ChatBackend, initial = { cache: fx.cache, path: fx.cachePath }, extra: Record<string, unknown> = {}, method = METHOD) {
  await runScenarioWith({ ...fx, cache: initial.cache, cachePath: initial.path }, method, outDir, backend, { config: extra });
  return readRun(outDir);
}

describe("merit_fine_types, one file outside lib/", () => {
  it("is MERIT's memory with the classify hook, listed with its vocabulary", () => {
    const row = methodTable().find((l) => l.startsWith(`| \`${METHOD}\` |`))!;
    expect(row).toContain(`classify:fine_mismatch(${FINE_TYPES.length} types)`);
    const merit = getMethod("merit").record;
    const fine = getMethod(METHOD).record;
    expect(fine.hooks).toEqual({ calls: {}, memory: merit.hooks!.memory, classify: { name: "fine_mismatch", types: FINE_TYPES } });
  });

  it("on the scenario: the attempts, the memory and the type filter use the fine labels; the audit is clean", async () => {
    const dir = join(fx.root, "scenario");
    const { trajectories, retrievals, positives, negatives } = await run(dir, new ScriptedBackend(scenarioScript(fx.dataset)));
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    const byId = new Map(trajectories.map((t) => [t.query_id, t]));
    // DBMS failures keep their coarse types; B's repairs execute with too few rows (`WHERE id <= k`): a filter mismatch.
    expect(byId.get(A)!.error_types).toEqual(["Schema Linking", "Schema Linking", "Syntax", null]);
    expect(byId.get(B)!.error_types).toEqual(["Syntax", ...Array(7).fill("Mismatch: filter")]);
    expect(byId.get(C)!.error_types).toEqual(["Schema Linking", null]);
    expect(trajectories.flatMap((t) => t.error_types)).not.toContain("Result Mismatch");
    // The memory entries carry the fine type: B's failed attempts are stored as negatives of "Mismatch: filter".
    const entries = [...positives, ...negatives];
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(FINE_TYPES).toContain(e.error_type);
    expect(negatives.filter((e) => e.source_query_id === B).map((e) => e.error_type)).toContain("Mismatch: filter");
    // The retrieval log: B's steps 2..7 repair a filter mismatch, and MERIT's hard filter is applied to
    // that label: no earlier entry is a filter mismatch (A's positive is Syntax), so the typed pool is empty.
    const bSteps = retrievals.filter((r) => r.query_id === B);
    expect(bSteps.map((r) => r.current_error_type)).toEqual(["Syntax", ...Array(6).fill("Mismatch: filter")]);
    for (const r of bSteps) expect(r.type_filter_applied).toBe(true);
    expect(bSteps.slice(1).map((r) => [r.legal_pool_size, r.typed_pool_size])).toEqual(Array(6).fill([1, 0]));
    for (const r of retrievals) for (const t of r.retrieved_error_types) expect(FINE_TYPES).toContain(t);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
    // The failure figure's final bars show what B was left with.
    const summary = summarizeRun(trajectories);
    expect(summary.metrics.final_failure_breakdown).toEqual({ "Mismatch: filter": 1 });
    expect(failureComposition([summary]).filter((s) => s.phase === "Final").map((s) => `${s.type} ${s.count}`)).toEqual(["Mismatch: filter 1"]);
  }, budget(120_000));

  it("Table 5 lists the fine labels of initial failures that executed wrongly", async () => {
    // The same five queries with initial SQL that executes but answers wrongly, one per rule
    // (426 stays correct); repairs are junk and K = 1, so every failure stays.
    const initialDir = join(fx.root, "fine-initial");
    mkdirSync(initialDir);
    const initialSql = new Map([
      ["426", fx.dataset.examples.find((e) => e.id === "426")!.goldSql],
      [A, "SELECT T1.series_name FROM TV_Channel AS T1 JOIN Cartoon AS T2 ON T1.id = T2.Channel"],
      [B, "SELECT Title FROM Cartoon WHERE id <= 1 ORDER BY Title"],
      [C, "SELECT count(*) FROM model_list"],
      ["278", "SELECT name FROM employee"],
    ]);
    const initial = await cacheFromChosenSql(fx.dataset, fx.oracle, initialSql, initialDir);
    const junk: ChatBackend = {
      identity: { kind: "test-scripted", model: "junk", modelHash: "none", params: {} },
      async generate(request) {
        return { text: "<answer>SELECT 1</answer>", promptTokens: request.prompt.split(/\s+/).length, outputTokens: 3, truncatedPromptTokens: 0, cached: false };
      },
      async close() {},
    };
    const dir = join(fx.root, "fine-run");
    const { trajectories } = await run(dir, junk, initial, { max_repair_steps: 1 });
    const byId = new Map(trajectories.map((t) => [t.query_id, t]));
    expect([A, B, C, "278"].map((id) => byId.get(id)!.error_types[0])).toEqual(["Mismatch: join", "Mismatch: filter", "Mismatch: aggregation", "Mismatch: projection"]);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
    // The hard filter pools by the fine labels: the junk repairs ("SELECT 1") are stored as projection
    // mismatches, so 278's projection mismatch finds the three of A, B and C in its typed pool while B's
    // filter mismatch finds none; MERIT's coarse labels put every one of them in one Result Mismatch pool.
    const typed = (r: { query_id: string; current_error_type: string; legal_pool_size: number; typed_pool_size: number }) => `${r.query_id} ${r.current_error_type} ${r.legal_pool_size} ${r.typed_pool_size}`;
    expect(readRun(dir).retrievals.map(typed)).toEqual([`${A} Mismatch: join 0 0`, `${B} Mismatch: filter 1 0`, `${C} Mismatch: aggregation 2 0`, "278 Mismatch: projection 3 3"]);
    const coarse = await run(join(fx.root, "coarse-run"), junk, initial, { max_repair_steps: 1 }, "merit");
    expect(coarse.retrievals.map(typed)).toEqual([`${A} Result Mismatch 0 0`, `${B} Result Mismatch 1 1`, `${C} Result Mismatch 2 2`, "278 Result Mismatch 3 3"]);
    const summary = summarizeRun(trajectories, { maxRepairSteps: 1 });
    const table = failureTable([summary]);
    const fineColumns = MISMATCH_TYPES.map((t) => `${t} n`).sort();
    expect(table.columns.slice(-4)).toEqual(fineColumns);
    expect(table.rows[0].slice(-4).map((c) => c.text)).toEqual(["1", "1", "1", "1"]);
    expect(table.data.filter((d) => typeof d.error_type === "string" && d.error_type.startsWith("Mismatch:")).map((d) => `${d.error_type} ${d.count}`)).toEqual(
      MISMATCH_TYPES.map((t) => `${t} 1`).sort(),
    );
    // the figure's initial bars too
    expect(failureComposition([summary]).filter((s) => s.phase === "Initial").map((s) => s.type)).toEqual([...MISMATCH_TYPES].sort());
  }, budget(120_000));
});

// Tests the grid plan's order-independence and role columns (issue 39 §13): a method whose memory is
// a hook's (a peer such as exprecent, a study's own) depends on the stream order like MERIT, and only
// the paper's methods are labelled "paper" — a peer is "peer (METHOD.md §13)", a study's own method
// "study (beyond the paper)", zeroshot a control.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { computePlan, gridPlanLines } from "../../lib/experiment/grid-plan.ts";
import { planStreams } from "../../lib/experiment/grid.ts";
import { registerMethod } from "../../lib/methods/index.ts";
import { budget } from "../helpers/budget.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";
import { closeScenario, openScenario, SCENARIO_LIMIT, type ScenarioFixture } from "../helpers/scripted-scenario.ts";

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("grid-plan-roles");
}, budget(120_000));
afterAll(() => closeScenario(fx));

registerMethod({
  name: "test_study_notes",
  description: "a study's own hook memory (test)",
  hooks: { memory: { name: "notes", heading: "NOTES", write: (e) => [{ kind: "trace", text: e.queryId }], retrieve: (_r, memory) => memory.map((note) => ({ note })) } },
});

describe("merit grid --plan: order-independent and role", () => {
  it("a hook memory is order-dependent; paper, peer, study and control roles", async () => {
    const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, max_repair_steps: 2 });
    const methods = ["iterative", "merit", "exprecent", "test_study_notes", "zeroshot"];
    const plan = await computePlan({ config, streams: planStreams(methods, [0], join(fx.root, "grid")), limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (example, sql) => fx.oracle.score(example, sql), lookup: null, identity: null });
    const by = Object.fromEntries(plan.methods.map((m) => [m.method, m]));
    expect(Object.fromEntries(methods.map((m) => [m, [by[m].orderIndependent, by[m].role]]))).toEqual({
      iterative: [true, "paper"],
      merit: [false, "paper"],
      exprecent: [false, "peer"],
      test_study_notes: [false, "study"],
      zeroshot: [true, "control"],
    });
    const rows = gridPlanLines(plan).filter((l) => l.startsWith("| test_study_notes |") || l.startsWith("| exprecent |"));
    expect(rows[0]).toMatch(/^\| exprecent \| 1 \| no \|.*\| peer \(METHOD\.md §13\) \|$/);
    expect(rows[1]).toMatch(/^\| test_study_notes \| 1 \| no \|.*\| study \(beyond the paper\) \|$/);
  }, budget(120_000));
});

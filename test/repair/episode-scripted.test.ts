// Repair stage through the runner (METHOD.md §4.3, §5.5, §6.1–6.3): a scripted chat backend on real
// Spider dev data with the real oracle drives the positive- and negative-memory paths of MERIT and
// checks what is written, what a later query retrieves and what its prompt shows.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { readRun, streamIds, type RunFiles } from "../helpers/run-fixture.ts";
import type { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenario, SCENARIO_IDS, SCENARIO_LIMIT as LIMIT, SCENARIO_SEED as SEED, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let dataset: Dataset;
let oracle: Oracle;
let cache: InitialCache;
let cachePath: string;
let root: string;
let fixture: ScenarioFixture | undefined;
const runs = new Map<string, RunFiles>();
const backends = new Map<string, ScriptedBackend>();

async function run(method: string): Promise<RunFiles> {
  const outDir = join(root, method);
  backends.set(method, await runScenario({ method, dataset, oracle, cache, cachePath, outDir }));
  return readRun(outDir);
}

beforeAll(async () => {
  fixture = await openScenario("episode-scripted");
  ({ root, dataset, oracle, cache, cachePath } = fixture);
  for (const method of ["merit", "positive_only", "dynamic_rag", "cross_database_only"]) runs.set(method, await run(method));
}, budget(120_000));

afterAll(() => closeScenario(fixture));

const byQuery = (r: RunFiles, id: string) => r.trajectories.find((t) => t.query_id === id)!;

describe("scripted MERIT run on real Spider data", () => {
  it("visits the scenario's queries in stream order with the cached labels", () => {
    expect(streamIds(dataset, cache, SEED, LIMIT)).toEqual(SCENARIO_IDS);
    const merit = runs.get("merit")!;
    expect(merit.trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    expect(merit.trajectories.map((t) => t.initial_correct)).toEqual([true, false, false, false, true]);
  });

  it("query A fails initially and is repaired at step 3 (types: Schema Linking, Schema Linking, Syntax)", () => {
    const a = byQuery(runs.get("merit")!, A);
    expect(a.statuses).toEqual(["EXECUTION_ERROR", "EXECUTION_ERROR", "EXECUTION_ERROR", "CORRECT"]);
    expect(a.error_types).toEqual(["Schema Linking", "Schema Linking", "Syntax", null]);
    expect(a.repair_steps).toBe(3);
    expect(a.final_correct).toBe(true);
    // 1 initial (cached) + 3 repairs; one planned insertion + one query embedding per non-empty retrieval.
    expect(a.accounting.llm_calls).toBe(4);
    expect(a.accounting.retrieval_calls).toBe(3);
  });

  it("writes one POSITIVE entry for A: delta attempt 2 => attempt 3, error type of attempt 2 (§4.3)", () => {
    const merit = runs.get("merit")!;
    const a = byQuery(merit, A);
    const entry = merit.positives.find((e) => e.source_query_id === A)!;
    expect(entry).toBeDefined();
    expect(entry.polarity).toBe("positive");
    expect(entry.error_type).toBe("Syntax");
    expect(entry.attempted_sql_delta).toBe(`${a.attempts[2]} => ${a.attempts[3]}`);
    expect(entry.successful_direction).toBe(`Observed successful transition: ${a.attempts[2]} => ${a.attempts[3]}`);
    expect(entry.failure_context).toBe(`attempted_sql=${a.attempts[2]}; status=EXECUTION_ERROR; db_error=${a.db_errors[2]}`);
    expect(entry.observed_outcome).toBe("CORRECT");
    expect(entry.observed_db_error).toBeNull();
    expect(entry.source_iteration).toBe(3);
    expect(entry.source_stream_position).toBe(1);
    expect([entry.success_count, entry.failure_count, entry.confirmation_count]).toEqual([1, 0, 1]);
  });

  it("the initially-correct query at position 0 writes nothing: A's retrievals see an empty memory", () => {
    const merit = runs.get("merit")!;
    const aSteps = merit.retrievals.filter((r) => r.query_id === A);
    expect(aSteps.map((r) => r.legal_pool_size)).toEqual([0, 0, 0]);
    // Memory holds exactly A+, B−, C+: nothing from the two initially correct queries.
    expect([...merit.positives, ...merit.negatives].map((e) => e.source_query_id).sort()).toEqual([A, B, C].sort());
  });

  it("a later query B with the same error type retrieves A's positive, logged and shown in its prompt", () => {
    const merit = runs.get("merit")!;
    const b = byQuery(merit, B);
    const aEntry = merit.positives.find((e) => e.source_query_id === A)!;
    expect(b.stream_position).toBeGreaterThan(1);
    expect(b.error_types[0]).toBe("Syntax");
    const step1 = merit.retrievals.find((r) => r.query_id === B && r.repair_iteration === 1)!;
    expect(step1.current_error_type).toBe("Syntax");
    expect(step1.retrieved_entry_ids).toEqual([aEntry.entry_id]);
    expect(step1.retrieved_polarities).toEqual(["positive"]);
    expect(step1.source_stream_positions).toEqual([1]);
    expect(b.retrieved_entry_ids[0]).toEqual([aEntry.entry_id]);
    const prompt = merit.prompts.filter((p) => p.query_id === B && p.kind === "repair")[0].prompt;
    const section = prompt.slice(prompt.indexOf("CONFIRMED SUCCESSFUL REPAIR DIRECTIONS:"), prompt.indexOf("OBSERVED FAILED DIRECTIONS:"));
    expect(section).toBe(
      [
        "CONFIRMED SUCCESSFUL REPAIR DIRECTIONS:",
        "[Confirmed successful repair 1]",
        `Entry ID: ${aEntry.entry_id}`,
        "Error type: Syntax",
        `Failure context: ${aEntry.failure_context}`,
        `Observed successful direction: ${aEntry.successful_direction}`,
        `SQL delta: ${aEntry.attempted_sql_delta}`,
        "",
        "",
      ].join("\n"),
    );
    expect(prompt).toContain("OBSERVED FAILED DIRECTIONS:\n(none)\n");
  });

  it("the unrepaired episode B writes a NEGATIVE entry from its final transition", () => {
    const merit = runs.get("merit")!;
    const b = byQuery(merit, B);
    expect(b.repair_steps).toBe(7);
    expect(b.final_correct).toBe(false);
    const entry = merit.negatives.find((e) => e.source_query_id === B)!;
    expect(entry.polarity).toBe("negative");
    expect(entry.attempted_sql_delta).toBe(`${b.attempts[6]} => ${b.attempts[7]}`);
    expect(entry.error_type).toBe(b.error_types[7]);
    expect(entry.observed_outcome).toBe(b.statuses[7]);
    expect(entry.successful_direction).toBe("");
    expect(entry.source_iteration).toBe(7);
    expect(entry.provenance.retrieved_entry_ids).toEqual(b.retrieved_entry_ids[6]);
  });

  it("query C sees both A's positive and B's negative in their prompt sections", () => {
    const merit = runs.get("merit")!;
    const negative = merit.negatives.find((e) => e.source_query_id === B)!;
    const step1 = merit.retrievals.find((r) => r.query_id === C && r.repair_iteration === 1)!;
    expect(step1.retrieved_polarities).toEqual(["positive", "negative"]);
    expect(step1.retrieved_entry_ids[1]).toBe(negative.entry_id);
    const prompt = merit.prompts.find((p) => p.query_id === C)!.prompt;
    expect(prompt).toContain(`[OBSERVED FAILED DIRECTION 1]\nEntry ID: ${negative.entry_id}\n`);
    expect(prompt).toContain(`Attempted SQL delta: ${negative.attempted_sql_delta}\nObserved outcome: ${negative.observed_outcome}\n`);
    expect(byQuery(merit, C).final_correct).toBe(true);
  });

  it("logs every prompt with its SHA-256 hash and exactly the prompts the backend received", () => {
    const merit = runs.get("merit")!;
    for (const p of merit.prompts) expect(p.prompt_hash).toBe(createHash("sha256").update(p.prompt, "utf8").digest("hex"));
    expect(merit.prompts.map((p) => p.prompt)).toEqual(backends.get("merit")!.calls.map((c) => c.prompt));
    const calls = merit.trajectories.reduce((n, t) => n + t.accounting.llm_calls, 0);
    expect(merit.prompts.length).toBe(calls - merit.trajectories.length);
  });

  for (const method of ["positive_only", "dynamic_rag"]) {
    it(`${method} stores A's and C's positives but no negative for B`, () => {
      const r = runs.get(method)!;
      expect(r.negatives).toEqual([]);
      expect(r.positives.map((e) => e.source_query_id)).toEqual([A, C]);
      const cStep = r.retrievals.find((x) => x.query_id === C)!;
      expect(cStep.retrieved_polarities).toEqual(["positive"]);
      expect(r.prompts.find((p) => p.query_id === C)!.prompt).toContain("OBSERVED FAILED DIRECTIONS:\n(none)\n");
    });
  }

  it("cross_database_only: B (tvshow, like A) cannot see A's entry; C (car_1) sees both", () => {
    const r = runs.get("cross_database_only")!;
    expect(byQuery(r, A).db_id).toBe(byQuery(r, B).db_id);
    const bSteps = r.retrievals.filter((x) => x.query_id === B);
    expect(bSteps).toHaveLength(7);
    for (const step of bSteps) {
      expect(step.legal_pool_size).toBe(0);
      expect(step.retrieved_entry_ids).toEqual([]);
    }
    const cStep = r.retrievals.find((x) => x.query_id === C)!;
    expect(cStep.source_db_ids).toEqual(["tvshow", "tvshow"]);
    expect(cStep.retrieved_polarities).toEqual(["positive", "negative"]);
    for (const e of [...r.positives, ...r.negatives]) expect(e.applicability_scope).toBe("cross_database");
  });

  it("memory files are exactly the written entries (metadata counts agree)", () => {
    const meta = JSON.parse(readFileSync(join(root, "merit", "memory", "memory_metadata.json"), "utf8"));
    expect([meta.entry_count, meta.positive_count, meta.negative_count]).toEqual([3, 2, 1]);
  });
});

describe("K = 0: no repair generations at all (METHOD.md §6.1, §4.3, §10.13)", () => {
  for (const method of ["merit", "reflexion"]) {
    it(`${method}: every failed query ends after attempt 0 with no LLM call${method === "merit" ? ", leaving an `initial SQL => …` negative" : ""}`, async () => {
      const outDir = join(root, `${method}-k0`);
      const backend = await runScenario({ method, dataset, oracle, cache, cachePath, outDir, config: { max_repair_steps: 0 } });
      expect(backend.calls).toEqual([]); // not even Reflexion's first reflection
      const r = readRun(outDir);
      for (const t of r.trajectories) {
        expect(t.repair_steps).toBe(0);
        expect(t.call_kinds).toEqual(["initial_cache"]);
      }
      if (method !== "merit") return;
      expect(r.positives).toEqual([]);
      expect(r.negatives.map((e) => e.source_query_id)).toEqual([A, B, C]);
      for (const e of r.negatives) {
        const t = byQuery(r, e.source_query_id);
        expect(e.attempted_sql_delta).toBe(`initial SQL => ${t.attempts[0]}`);
        expect(e.error_type).toBe(t.error_types[0]);
        expect(e.source_iteration).toBe(0);
        expect(e.provenance.retrieved_entry_ids).toEqual([]);
      }
    });
  }
});

// Tests the peers' settings as factory arguments (issue 37 §1; lib/methods/settings.ts): every peer
// records its settings, the originals' values by default, in method_parts; a study arm's
// `args` (flat, or the older nested `args.settings`) builds the peer again with other values — ReasoningBank at top-k 2 runs with it on
// the scripted five-query scenario (its manifest records it, its retrievals take two earlier
// episodes); an unknown or out-of-range setting, and settings for a method without any, are refused
// in one line.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineStudy, registerStudyArms } from "../../lib/experiment/study.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { getMethod, meritMemory, methodDefinition, methodFromManifest, methodRecord, reflect, registerMethod } from "../../lib/methods/index.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, type ScenarioFixture, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** Judges every episode a success and distills one item naming its question; repairs go to `repairs`. */
class JudgeDistillDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "rb-double", modelHash: "none", params: {} };
  readonly repairs: ChatBackend;
  constructor(repairs: ChatBackend) {
    this.repairs = repairs;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const p = request.prompt;
    const question = /^Question: (.*)$/m.exec(p)?.[1] ?? "";
    let text: string;
    if (p.startsWith("RB-JUDGE")) text = "<reasoning>fine</reasoning><verdict>success</verdict>";
    else if (p.startsWith("RB-DISTILL")) text = `<item><title>T</title><description>D</description><content>Learned from: ${question}</content></item>`;
    else return this.repairs.generate(request);
    return { text, promptTokens: 10, outputTokens: 5, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

const DEFAULTS: Record<string, Record<string, number>> = {
  reasoning_bank: { top_k: 1, max_items: 3, path_attempts: 7 },
  reasoning_bank_oracle: { top_k: 1, max_items: 3, path_attempts: 7 },
  dynamic_cheatsheet: { sheet_cap: 2000 },
  dynamic_cheatsheet_rs: { top_k: 3, sheet_cap: 2000 },
  awm: { window: 20, cap: 2000, path_attempts: 7 },
  expel_online: { max_rules: 20, max_operations: 4, few_shots: 2, path_attempts: 7 },
  exprag: { top_k: 4, path_attempts: 7 },
  exprecent: { top_k: 4, path_attempts: 7 },
  error_fix_memory: { fixes_shown: 2, solved_shown: 2 },
};

const base = { datasets: ["spider"], seeds: [0], queries: 5 };

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("peer-settings");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("peer settings", () => {
  it("every peer records its settings, the originals' values by default; a method without a factory records none", () => {
    for (const [name, values] of Object.entries(DEFAULTS)) {
      expect(getMethod(name).record.settings, name).toEqual(values);
      expect(Object.keys(methodDefinition(name).settingSpecs ?? {})).toEqual(Object.keys(values));
    }
    expect(getMethod("merit").record.settings).toBeUndefined();
    expect(getMethod("iterative").record).not.toHaveProperty("settings");
  });

  it("an arm overriding reasoning_bank's top_k runs with it: the manifest records it, retrievals take two earlier episodes", async () => {
    const study = defineStudy({ ...base, name: "peer-settings-1", methods: ["reasoning_bank", "rb_top2_t"], reference: "reasoning_bank", arms: { rb_top2_t: { method: "reasoning_bank", args: { top_k: 2 } } } });
    registerStudyArms(study);
    const arm = getMethod("rb_top2_t");
    expect(arm.record.settings).toEqual({ top_k: 2, max_items: 3, path_attempts: 7 });
    expect(arm.description).toMatch(/top-2 similar earlier questions before each repair \[arm of reasoning_bank: top_k=2\]$/);
    expect(getMethod("reasoning_bank").record.settings?.top_k).toBe(1); // the registered peer is unchanged
    const dir = join(fx.root, "rb_top2_t");
    await runScenarioWith(fx, "rb_top2_t", dir, new JudgeDistillDouble(new ScriptedBackend(scenarioScript(fx.dataset))));
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.method).toBe("rb_top2_t");
    expect(manifest.method_parts.settings).toEqual({ top_k: 2, max_items: 3, path_attempts: 7 });
    expect(methodRecord(methodFromManifest(manifest))).toEqual(manifest.method_parts);
    const files = readRun(dir);
    expect(files.trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    const episodeOf = new Map(files.trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => [n.note_id, t.query_id] as const)));
    // C (position 3) sees the items of two earlier episodes (top-1 would show one).
    for (const r of files.retrievals.filter((x) => x.query_id === C)) expect(new Set(r.retrieved_entry_ids.map((id) => episodeOf.get(id))).size).toBe(2);
    // Each item's note keeps its episode's repair path (bounded): the final attempt and the failed ones.
    const c = files.trajectories.find((t) => t.query_id === C)!;
    expect((c.memory_writes![0].data as { path: { failed: unknown[] } }).path.failed).toHaveLength(c.repair_steps);
  }, budget(120_000));

  it("refuses an unknown setting, a value out of range, and settings for a method that has none, in one line", () => {
    const arm = (name: string, method: string, settings: Record<string, unknown>) => defineStudy({ ...base, name, methods: [method, "peer_bad_t"], reference: method, arms: { peer_bad_t: { method, args: settings } } });
    const refuse = (study: ReturnType<typeof defineStudy>, pattern: RegExp) => {
      let message = "";
      try {
        registerStudyArms(study);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(pattern);
      expect(message).not.toContain("\n");
    };
    refuse(arm("peer-settings-2", "reasoning_bank", { top_kk: 2 }), /^study peer-settings-2: arm "peer_bad_t": method "reasoning_bank" has no setting "top_kk" \(did you mean "top_k"\?\); its settings: top_k, max_items, path_attempts$/);
    refuse(arm("peer-settings-3", "dynamic_cheatsheet_rs", { top_k: 0 }), /^study peer-settings-3: arm "peer_bad_t": method "dynamic_cheatsheet_rs": setting top_k must be an integer in 1\.\.50 .*got 0$/);
    refuse(arm("peer-settings-4", "expel_online", { few_shots: 1.5 }), /setting few_shots must be an integer in 0\.\.20/);
    refuse(arm("peer-settings-5", "merit", { top_k: 2 }), /^study peer-settings-5: arm "peer_bad_t": method "merit": memory "merit_memory" has no arg "top_k"; its args: layout, type_filter, /);
    refuse(arm("peer-settings-6", "iterative", { top_k: 2 }), /^study peer-settings-6: arm "peer_bad_t": method "iterative" has no args to change \(top_k\); it is built from no factory$/);
    // the nested form of earlier kits (args: { settings: { … } }) is still read
    const nested = defineStudy({ ...base, name: "peer-settings-7", methods: ["reasoning_bank", "rb_nested_t"], reference: "reasoning_bank", arms: { rb_nested_t: { method: "reasoning_bank", args: { settings: { top_k: 3 } } } } });
    registerStudyArms(nested);
    expect(getMethod("rb_nested_t").record.settings?.top_k).toBe(3);
  });

  it("an arm's args vary a plugin method whose memory is MERIT's (hooks written directly, no withArgs of its own)", () => {
    registerMethod({ name: "plugin_merit_t", description: "test", hooks: { memory: meritMemory({ type_filter: "never" }), step: reflect() } });
    const study = defineStudy({ ...base, name: "peer-settings-8", methods: ["plugin_merit_t", "plugin_merit_k5_t"], reference: "plugin_merit_t", arms: { plugin_merit_k5_t: { method: "plugin_merit_t", args: { max_positive: 5 } } } });
    registerStudyArms(study);
    const armed = getMethod("plugin_merit_k5_t");
    expect(armed.memory?.limits.positive).toBe(5);
    expect(armed.memory?.typeFilter).toBe("never"); // the plugin's own arg stays
    expect(armed.hooks.step?.name).toBe("reflect");
    expect(() => registerStudyArms(defineStudy({ ...base, name: "peer-settings-9", methods: ["plugin_merit_t", "plugin_merit_bad_t"], reference: "plugin_merit_t", arms: { plugin_merit_bad_t: { method: "plugin_merit_t", args: { max_postive: 5 } } } }))).toThrow(/^study peer-settings-9: arm "plugin_merit_bad_t": memory "merit_memory" has no arg "max_postive" \(did you mean "max_positive"\?\)/);
  });

  it("withArgs builds fresh hooks: two ExpeL arms share no state, and each states its own limits", () => {
    const small = methodDefinition("expel_online").withArgs!({ max_rules: 5, max_operations: 2 });
    expect(small.settings).toEqual({ max_rules: 5, max_operations: 2, few_shots: 2, path_attempts: 7 });
    expect(small.description).toContain("at most 2 ADD/AGREE/EDIT/REMOVE, importance counters, at most 5");
    expect(small.hooks).not.toBe(methodDefinition("expel_online").hooks);
    // Settings compose: an override of an override keeps the first.
    expect(small.withArgs!({ few_shots: 0 }).settings).toEqual({ max_rules: 5, max_operations: 2, few_shots: 0, path_attempts: 7 });
  });
});

// Tests the causal boundary of a method's hooks (lib/methods/hooks.ts, issue 29 §2) on the scripted
// five-query scenario (real Spider data): a memory hook's `retrieve` only ever sees notes written at
// strictly earlier stream positions and never its own query's, and cannot smuggle in a note of its
// own making; a plugin whose written notes contain the gold SQL (here: a hook that reads the dataset
// behind the kit's back) is flagged by `merit audit` as gold-in-memory; a hook that calls the model
// under an undeclared kind, or more often than declared, and a classifier that returns an undeclared
// label, stop the run with one line.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { auditRun } from "../../lib/experiment/audit.ts";
import { registerMethod, type MethodDefinition, type NoteView } from "../../lib/methods/index.ts";
import { eligibleNotes } from "../../lib/methods/hooks.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { B, C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, type ScenarioFixture, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("hooks-causal");
}, budget(120_000));
afterAll(() => closeScenario(fx));

async function run(method: string, outDir: string) {
  return runScenarioWith(fx, method, outDir, hookAnswers(new ScriptedBackend(scenarioScript(fx.dataset))));
}

/** The scenario's repairs, and "ok" to any other prompt (a hook's own calls). */
function hookAnswers(repairs: ChatBackend): ChatBackend {
  return {
    identity: repairs.identity,
    generate: (request) => (request.prompt.includes("\nQUESTION:\n") ? repairs.generate(request) : Promise.resolve({ text: "ok", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false })),
    close: async () => {},
  };
}

describe("a memory hook sees only the eligible view", () => {
  // Every episode writes one note; every retrieval records what it was shown and picks all of it.
  const seen: { position: number; query: string; notes: { position: number; query: string }[] }[] = [];
  registerMethod({
    name: "test_spy_memory",
    description: "writes one note per episode, retrieves everything it is shown (test)",
    hooks: {
      memory: {
        name: "spy",
        heading: "SPY NOTES",
        write: (episode) => [{ kind: "trace", text: `episode of ${episode.queryId} at ${episode.streamPosition}` }],
        retrieve: (request, memory) => {
          seen.push({ position: request.streamPosition, query: request.queryId, notes: memory.map((n) => ({ position: n.source_stream_position, query: n.source_query_id })) });
          return memory.map((note) => ({ note }));
        },
      },
    },
  });

  it("retrieve is shown every earlier note and nothing at or after its position, nor its own query's", async () => {
    const dir = join(fx.root, "spy");
    await run("test_spy_memory", dir);
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) {
      expect(s.notes.every((n) => n.position < s.position && n.query !== s.query)).toBe(true);
      expect(s.notes.map((n) => n.position)).toEqual(Array.from({ length: s.position }, (_, i) => i)); // every earlier episode wrote one
    }
    const { trajectories, prompts } = readRun(dir);
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    const cPrompt = prompts.find((p) => p.query_id === C && p.kind === "repair")!.prompt;
    expect(cPrompt).toContain("SPY NOTES:\n[trace 1]\nNote ID: ");
    expect(cPrompt).toContain(`episode of ${B} at 2`);
    expect(cPrompt).not.toContain(`episode of ${C} at 3`);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
  }, budget(120_000));

  it("eligibleNotes drops notes at or after the position and the current query's, as a frozen copy", () => {
    const note = (position: number, query: string) => ({ source_stream_position: position, source_query_id: query }) as unknown as NoteView;
    const all = [note(0, "a"), note(1, "b"), note(2, "c"), note(3, "d"), note(1, "x")];
    const view = eligibleNotes(all, 2, "x");
    expect(view.map((n) => n.source_query_id)).toEqual(["a", "b"]);
    expect(Object.isFrozen(view)).toBe(true);
  });

  it("a note the hook made up (not one of the view's) is refused in one line", async () => {
    registerMethod({
      name: "test_forger",
      description: "retrieves a note it made itself (test)",
      hooks: {
        memory: {
          name: "forger",
          heading: "FORGED",
          write: () => [{ kind: "trace", text: "x" }],
          retrieve: (_request, memory) => (memory.length === 0 ? [] : [{ note: { ...memory[0], text: "anything" } }]),
        },
      },
    });
    await expect(run("test_forger", join(fx.root, "forger"))).rejects.toThrow(/^method "test_forger": memory\.retrieve must return notes from the memory it was given/);
  }, budget(120_000));
});

describe("merit audit checks what a hook wrote", () => {
  it("flags notes holding the gold SQL (gold-in-memory), and exits 1", async () => {
    const gold = new Map(fx.dataset.examples.map((e) => [e.id, e.goldSql]));
    registerMethod({
      name: "test_gold_leak",
      description: "writes its query's gold SQL into memory, read from the dataset behind the kit's back (test)",
      hooks: {
        memory: {
          name: "leaky",
          heading: "LEAKED",
          write: (episode) => [{ kind: "lesson", text: `The answer is ${gold.get(episode.queryId)}` }],
          retrieve: () => [],
        },
      },
    });
    const dir = join(fx.root, "leak");
    await run("test_gold_leak", dir);
    const violations = auditRun(dir, fx.dataset).violations.filter((v) => v.kind === "gold-in-memory");
    // As in the prompt check, SQL the model wrote in this episode (or an earlier one) is masked first:
    // 426 and 278 start from their gold SQL, and A and B each made an attempt that is a prefix of
    // their gold (A's second repair, B's initial SQL), which masks it. C's attempts differ from its
    // gold, so the gold SQL in C's note is a leak.
    expect(violations.map((v) => v.queryId)).toEqual([C]);
    expect(violations[0].detail).toMatch(/^memory note \S+ \(lesson\) contains the gold SQL$/);
    const out: string[] = [];
    expect(await main(["audit", dir], { out: (l) => out.push(l), err: () => undefined })).toBe(1);
    expect(out.at(-1)).toBe(`violations ${violations.length}`);
    expect(out.some((l) => l.includes("gold-in-memory"))).toBe(true);
  }, budget(120_000));
});

describe("declared vocabularies", () => {
  it("an undeclared call kind, one call too many, and an undeclared label each stop the run with one line", async () => {
    const memory = (call: (m: { generate(kind: string, prompt: string): Promise<string> }) => Promise<unknown>) => ({
      name: "caller",
      heading: "CALLER",
      write: async (_episode: unknown, model: { generate(kind: string, prompt: string): Promise<string> }) => {
        await call(model);
        return [];
      },
      retrieve: () => [],
    });
    registerMethod({ name: "test_undeclared", description: "calls an undeclared kind (test)", hooks: { memory: memory((m) => m.generate("distill", "x")) } });
    registerMethod({ name: "test_too_many", description: "calls twice, declares one (test)", hooks: { calls: { distill: { most: 1 } }, memory: memory(async (m) => (await m.generate("distill", "x"), m.generate("distill", "y"))) } });
    registerMethod({ name: "test_calls_repair", description: "calls the kit's repair kind (test)", hooks: { memory: memory((m) => m.generate("repair", "x")) } });
    registerMethod({ name: "test_bad_label", description: "classifies outside its types (test)", hooks: { classify: { name: "bad", types: ["A"], classify: () => "B" } } });
    await expect(run("test_undeclared", join(fx.root, "undeclared"))).rejects.toThrow(/a hook called the model with kind "distill", which it does not declare/);
    await expect(run("test_calls_repair", join(fx.root, "calls-repair"))).rejects.toThrow(/a hook called the model with kind "repair", which it does not declare/);
    await expect(run("test_too_many", join(fx.root, "too-many"))).rejects.toThrow(/made 2 "distill" calls in the episode of query \S+ but declare at most 1/);
    await expect(run("test_bad_label", join(fx.root, "bad-label"))).rejects.toThrow(/classifier "bad" returned "B" for query \S+, which is not one of its declared types \(A\)/);
  }, budget(120_000));

  it("hooks are checked when the method is registered", () => {
    expect(() => registerMethod({ name: "test_bad_kind", description: "x", hooks: { calls: { repair: { most: 1 } } } })).toThrow(/call kind "repair" is the kit's own/);
    // a method has one memory (MERIT's is a hook too); the retired parts form is refused in one line
    expect(() => registerMethod({ name: "test_both", description: "x", parts: { planner: { name: "pools" }, ranker: { name: "hybrid" }, writer: { name: "episode_memory" } }, hooks: { memory: { name: "m", heading: "H", write: () => [], retrieve: () => [] } } } as unknown as MethodDefinition)).toThrow(/^method "test_both": methods are hooks now, not parts/);
    expect(() => registerMethod({ name: "test_no_types", description: "x", hooks: { classify: { name: "c", types: [], classify: () => "x" } } })).toThrow(/classify\.types must list every label/);
  });
});

describe("a step hook", () => {
  it("adds a note after the initial failure and each failed repair another repair follows, under its declared kind", async () => {
    registerMethod({
      name: "test_step_critic",
      description: "a critic's note after every failure (test)",
      hooks: {
        calls: { critic: { most: 7, per: "repair_episode" } },
        step: { name: "critic", afterFailure: async (state, model) => `${await model.generate("critic", `critique ${state.queryId}`)} after ${state.attempts.length} attempts` },
      },
    });
    const dir = join(fx.root, "step");
    await run("test_step_critic", dir);
    const { trajectories, prompts } = readRun(dir);
    const by = new Map(trajectories.map((t) => [t.query_id, t]));
    // B is never repaired (K = 7): a note after the initial failure and after repairs 1-6, none after the 7th.
    expect(by.get(B)!.reflections).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => `ok after ${n} attempts`));
    expect(by.get(B)!.call_kinds.filter((k) => k === "critic")).toHaveLength(7);
    expect(by.get(C)!.reflections).toEqual(["ok after 1 attempts"]); // repaired at the first repair
    expect(by.get("426")!.reflections).toEqual([]);
    const secondB = prompts.filter((p) => p.query_id === B && p.kind === "repair")[1].prompt;
    expect(secondB).toContain("LOCAL REFLECTIONS FROM THIS EPISODE:\n[Local reflection 1] ok after 1 attempts\n[Local reflection 2] ok after 2 attempts\n");
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
  }, budget(120_000));
});

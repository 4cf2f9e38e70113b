// A hook's deadline in a run (issue 39 item 20; lib/methods/hook-guard.ts): config `hook_deadline_s`
// bounds the time a hook spends per call outside its model calls. A retrieve that never returns stops
// `merit run` with one line naming the method, the hook and the setting (not a hang); the manifest
// records the deadline the config set; the deadline is not part of the run's identity, so the run
// resumes under a raised one once the hook is fixed, to the same bytes as an uninterrupted run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { registerMethod } from "../../lib/methods/index.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, closeScenario, openScenario, runScenarioWith, scenarioScript, SCENARIO_LIMIT, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let hang = false;
registerMethod({
  name: "test_hanging_retrieve",
  description: "a retrieve that never returns while `hang` is set (test)",
  hooks: {
    memory: {
      name: "hanger",
      heading: "NOTES",
      write: (episode) => [{ kind: "trace", text: `episode of ${episode.queryId}` }],
      retrieve: (_request, memory) => (hang ? new Promise(() => {}) : memory.map((note) => ({ note }))),
    },
  },
});

const backend = (fx: ScenarioFixture): ChatBackend => new ScriptedBackend(scenarioScript(fx.dataset));

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("hook-deadline-run");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("hook_deadline_s", () => {
  it("stops a run whose retrieve never returns with one line, records the deadline, and resumes under a raised one", async () => {
    const whole = join(fx.root, "whole");
    await runScenarioWith(fx, "test_hanging_retrieve", whole, backend(fx));
    const dir = join(fx.root, "hung");
    hang = true;
    const error = await runScenarioWith(fx, "test_hanging_retrieve", dir, backend(fx), { config: { hook_deadline_s: 0.05 } }).then(
      () => null,
      (e: Error) => e,
    );
    hang = false;
    expect(error?.message).toMatch(new RegExp(`^method "test_hanging_retrieve": memory\\.retrieve \\("hanger"\\) did not return within 0\\.05 s in the episode of query ${A} .*raise hook_deadline_s in the config`));
    expect(error?.message).not.toContain("\n");
    expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).hook_deadline_s).toBe(0.05);
    expect(readFileSync(join(dir, "config.json"), "utf8")).not.toContain("hook_deadline_s");
    expect(JSON.parse(readFileSync(join(whole, "manifest.json"), "utf8")).hook_deadline_s).toBeUndefined();
    await runScenarioWith(fx, "test_hanging_retrieve", dir, backend(fx), { config: { hook_deadline_s: 600 }, resume: true });
    expect(readRun(dir).trajectories).toHaveLength(SCENARIO_LIMIT);
    for (const file of ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json", "config.json"]) {
      expect(readFileSync(join(dir, file), "utf8"), file).toBe(readFileSync(join(whole, file), "utf8"));
    }
  }, budget(120_000));

  it("is refused past what a Node timer holds, in one line", async () => {
    const { parseConfig } = await import("../../lib/experiment/config.ts");
    expect(() => parseConfig({ dataset: "spider", hook_deadline_s: 1e12 })).toThrow(/hook_deadline_s.*at most 2147483 seconds/);
    expect(() => parseConfig({ dataset: "spider", hook_deadline_s: 0 })).toThrow(/hook_deadline_s/);
  });
});

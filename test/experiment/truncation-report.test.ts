// Prompts cut to max_input_tokens (issue 39 item 21; lib/experiment/truncation-log.ts): a method whose
// memory hook shows a long note gets repair prompts the server cuts to their last tokens. The run says
// so (one line the first time a kind is cut, a summary per kind at the end, in stdout.log and through
// the run's log), and merit report's cost table counts the cut calls per method and kind. A run
// without cuts prints nothing of it and its cost table keeps its columns.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costTable } from "../../lib/analysis/table-cost.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { registerMethod } from "../../lib/methods/index.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { closeScenario, openScenario, runScenarioWith, scenarioScript, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

registerMethod({
  name: "test_long_note",
  description: "writes one long note per episode and shows every earlier one (test)",
  hooks: {
    calls: { distill: { most: 1 } },
    memory: {
      name: "long",
      heading: "LONG NOTES",
      write: async (episode, model) => [{ kind: "lesson", text: `${await model.generate("distill", `DISTILL ${episode.queryId}`)} ${"word ".repeat(2000)}` }],
      retrieve: (_request, memory) => memory.map((note) => ({ note })),
    },
  },
});

/** The scenario's repairs; a prompt holding LONG NOTES is reported cut by 500 tokens, a distill call is not. */
function cutting(fx: ScenarioFixture): ChatBackend {
  const script = new ScriptedBackend(scenarioScript(fx.dataset));
  return {
    identity: script.identity,
    async generate(request) {
      if (request.prompt.startsWith("DISTILL")) return { text: "lesson", promptTokens: 2, outputTokens: 1, truncatedPromptTokens: 0, cached: false };
      const result = await script.generate(request);
      return request.prompt.includes("LONG NOTES:") ? { ...result, truncatedPromptTokens: 500 } : result;
    },
    close: async () => {},
  };
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("truncation-report");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("prompts cut to max_input_tokens", () => {
  it("are said on the run's log and counted per method and kind in the cost table", async () => {
    const dir = join(fx.root, "cut");
    await runScenarioWith(fx, "test_long_note", dir, cutting(fx));
    const { trajectories } = readRun(dir);
    const cutCalls = trajectories.reduce((n, t) => n + t.truncated_prompt_tokens.filter((x) => x > 0).length, 0);
    expect(cutCalls).toBeGreaterThan(0);
    const log = readFileSync(join(dir, "stdout.log"), "utf8");
    expect(log.match(/was cut by 500 tokens/g)).toHaveLength(1); // once per kind, then the summary
    expect(log).toMatch(/method test_long_note: a "repair" prompt of query \S+ was cut by 500 tokens to its last max_input_tokens tokens/);
    expect(log).toContain(`method test_long_note: prompts cut to max_input_tokens: repair ${cutCalls} calls (${cutCalls * 500} tokens dropped)`);
    const table = costTable([summarizeRun(trajectories)])!;
    expect(table.columns).toContain("repair cut");
    expect(table.columns).not.toContain("distill cut");
    const at = table.columns.indexOf("repair cut");
    expect(Number(table.rows[0][at].text)).toBeCloseTo(cutCalls / trajectories.length, 2);
    expect(table.notes.join(" ")).toContain("cut to its last max_input_tokens tokens");
  }, budget(120_000));

  it("a run without cuts says nothing of them, and its cost table has no cut column", async () => {
    const dir = join(fx.root, "whole");
    const script = new ScriptedBackend(scenarioScript(fx.dataset));
    const plain: ChatBackend = { identity: script.identity, generate: (r) => (r.prompt.startsWith("DISTILL") ? Promise.resolve({ text: "lesson", promptTokens: 2, outputTokens: 1, truncatedPromptTokens: 0, cached: false }) : script.generate(r)), close: async () => {} };
    await runScenarioWith(fx, "test_long_note", dir, plain);
    expect(readFileSync(join(dir, "stdout.log"), "utf8")).not.toContain("cut");
    expect(costTable([summarizeRun(readRun(dir).trajectories)])!.columns.some((c) => c.endsWith(" cut"))).toBe(false);
  }, budget(120_000));
});

// Repair prompt headings against entry polarity (issue item 1): every pool layout × every write
// setting (`positive`, `negative`) of MERIT's memory (`meritMemory`), built as a method and run for one repair step on a memory holding what
// that writer stores; each retrieved entry must appear under its own polarity's heading — a failed
// direction never under "CONFIRMED SUCCESSFUL REPAIR DIRECTIONS" (a combined pool with a writer
// that stores negatives used to put them there).
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import type { Polarity } from "../../lib/memory/entry.ts";
import { meritMemory } from "../../lib/methods/merit-memory.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode } from "../../lib/repair/episode.ts";
import { episodeMemoryOf } from "../../lib/repair/episode-memory.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { ScriptedEmbedder, storeOf, type EntrySpec } from "../memory/fixtures.ts";

const example: Example = { id: "cur", sourceIndex: 0, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };
const failed: Verdict = { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null };
const embedder = () => new ScriptedEmbedder(4, () => [1, 0, 0, 0]);

/** Entry ids listed between a heading and the next blank line. */
function idsUnder(prompt: string, heading: string): string[] {
  const start = prompt.indexOf(`${heading}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const section = prompt.slice(start + heading.length + 1).split("\n\n")[0];
  return [...section.matchAll(/^Entry ID: (\S+)$/gm)].map((m) => m[1]);
}

const LAYOUTS = ["by_polarity", "positive_only", "combined"] as const;
const WRITERS = [
  { positive: true, negative: true },
  { positive: true, negative: false },
  { positive: false, negative: true },
  { positive: false, negative: false },
] as const;

describe("each retrieved entry is shown under its own polarity's heading, for every layout × writer", () => {
  for (const layout of LAYOUTS) {
    for (const writer of WRITERS) {
      it(`layout ${layout}, writer positive=${writer.positive} negative=${writer.negative}`, async () => {
        const method = buildMethod({
          name: "polarity_probe",
          description: "test",
          hooks: { memory: meritMemory({ layout, ...writer }) },
        });
        const specs: EntrySpec[] = [];
        for (const polarity of ["positive", "negative"] as const) {
          if (!writer[polarity]) continue;
          for (let i = 0; i < 3; i++) specs.push({ polarity, errorType: "Schema Linking", position: i });
        }
        const memory = await storeOf(specs, embedder());
        const polarity = new Map<string, Polarity>(memory.entries().map((e) => [e.entry_id, e.polarity]));
        const prompts: string[] = [];
        const backend = {
          identity: { kind: "test-capture", model: "capture", modelHash: "none", params: {} },
          generate: async ({ prompt }: { prompt: string }) => (prompts.push(prompt), { text: "<answer>SELECT x FROM singer</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }),
        } as unknown as ChatBackend;
        const result = await runEpisode(
          { dataset: "spider", method, streamSeed: 0, streamPosition: 100, example, schema: "", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: "denotation_confirmed", maxRepairSteps: 1, maxOutputTokens: 64 },
          { backend, score: async () => failed, memory: episodeMemoryOf(method, { store: memory, retriever: createRetriever() }), embedder: embedder() },
        );
        expect(prompts).toHaveLength(1);
        const shownPositive = idsUnder(prompts[0], "CONFIRMED SUCCESSFUL REPAIR DIRECTIONS:");
        const shownNegative = idsUnder(prompts[0], "OBSERVED FAILED DIRECTIONS:");
        expect(shownPositive.map((id) => polarity.get(id))).toEqual(shownPositive.map(() => "positive"));
        expect(shownNegative.map((id) => polarity.get(id))).toEqual(shownNegative.map(() => "negative"));
        // Everything retrieved is shown, once.
        expect([...shownPositive, ...shownNegative].sort()).toEqual([...result.retrieved[0]].sort());
        // Something of each stored polarity a pool can reach is shown.
        expect(shownPositive.length > 0).toBe(writer.positive);
        expect(shownNegative.length > 0).toBe(writer.negative && layout !== "positive_only");
      });
    }
  }
});

// The shared initial cache built by the model (METHOD.md §6.6): one greedy call per query with the
// initial prompt, SQL extracted from the answer, labels from the oracle, token counts from the backend,
// prompt hashes of the exact prompts, and a cache that round-trips through its own verification.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Dataset } from "../../lib/data/types.ts";
import { initialCacheFromModel, readInitialCache, writeInitialCache } from "../../lib/experiment/initial-cache.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { initialPrompt, promptHash } from "../../lib/prompts.ts";
import { loadSpider, spiderOracle, tempDir } from "../helpers/run-fixture.ts";

/** Answers the gold SQL for even source indices and prose without SQL for odd ones. */
class GoldOrProseBackend implements ChatBackend {
  readonly identity: BackendIdentity = { kind: "test-gold-or-prose", model: "gold-or-prose", modelHash: "none", params: {} };
  readonly prompts: string[] = [];
  private readonly goldByQuestion: Map<string, { sql: string; even: boolean }>;
  constructor(goldByQuestion: Map<string, { sql: string; even: boolean }>) {
    this.goldByQuestion = goldByQuestion;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.prompts.push(request.prompt);
    const question = /\nQUESTION:\n(.*)\n/.exec(request.prompt)![1];
    const gold = this.goldByQuestion.get(question)!;
    const text = gold.even ? `Here it is.\n<answer>\n${gold.sql};\n</answer>` : "I cannot answer that.";
    return { text, promptTokens: request.prompt.length, outputTokens: text.length, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

let full: Dataset;
let oracle: Oracle;
beforeAll(async () => {
  full = await loadSpider();
  oracle = spiderOracle(full, 1);
});
afterAll(async () => oracle.close());

describe("initial cache from the model", () => {
  it("labels extracted SQL with the oracle and records tokens and prompt hashes", async () => {
    const dataset: Dataset = { ...full, examples: full.examples.slice(0, 6) };
    const backend = new GoldOrProseBackend(new Map(dataset.examples.map((e) => [e.question, { sql: e.goldSql, even: e.sourceIndex % 2 === 0 }])));
    const cache = await initialCacheFromModel(dataset, backend, oracle, { maxOutputTokens: 512, maxInputTokens: 4096 });
    expect(backend.prompts).toHaveLength(6);
    expect(cache.identity.decoding_protocol).toBe("greedy-one-sql-v1");
    expect(cache.identity.prompt_format_version).toBe("merit-prompts-v4");
    for (const example of dataset.examples) {
      const r = cache.records.find((x) => x.query_id === example.id)!;
      const prompt = initialPrompt({ dataset: "spider", schema: dataset.schemas.get(example.dbId)!, question: example.question, evidence: "" });
      expect(r.prompt_hash).toBe(promptHash(prompt));
      expect(r.prompt_tokens).toBe(prompt.length);
      if (example.sourceIndex % 2 === 0) {
        // The trailing semicolon is cut by the single-statement canonicalisation (§2.7).
        expect(r.initial_sql).toBe(example.goldSql.replace(/;\s*$/, ""));
        expect([r.execution_status, r.oracle_correct]).toEqual(["CORRECT", true]);
      } else {
        // Prose without WITH/SELECT is kept as is and fails to parse.
        expect(r.initial_sql).toBe("I cannot answer that.");
        expect([r.execution_status, r.oracle_correct]).toEqual(["EXECUTION_ERROR", false]);
        expect(r.db_error).toMatch(/syntax error/);
      }
    }
    const path = join(tempDir("initial-model"), "cache.json");
    writeInitialCache(path, cache);
    expect(readInitialCache(path, dataset, oracle.protocolId)).toEqual(cache);
  });
});

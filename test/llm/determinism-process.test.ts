// Greedy determinism across processes (issue: LLM runtime, "Must show"): two fresh processes, one with
// 1 thread and one with 2, produce the same text and token counts as this process for the same prompts.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLlamaBackend } from "../../lib/llm/llama-backend.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const QWEN = join(ROOT, "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf");
const PROMPTS = ["List the singers.", "SELECT name FROM singer WHERE age > 30 -- fix this query"];

function inChild(threads: number): unknown {
  const stdout = execFileSync(process.execPath, [join(ROOT, "test/llm/fixtures/generate-once.ts"), QWEN, JSON.stringify(PROMPTS), String(threads)], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" },
  });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

describe("greedy determinism across processes", () => {
  it("two fresh processes (1 and 2 threads) reproduce this process's outputs exactly", async () => {
    const backend = await createLlamaBackend({ modelPath: QWEN, threads: 1, maxOutputTokensLimit: 48 });
    const here = [];
    for (const prompt of PROMPTS) here.push(await backend.generate({ prompt, maxOutputTokens: 48 }));
    await backend.close();
    expect(here[0].outputTokens).toBe(48); // random weights never emit EOS: the full budget is used
    expect(inChild(1)).toEqual(here);
    expect(inChild(2)).toEqual(here);
  }, budget(600_000)); // two cold node-llama-cpp start-ups; slow on a loaded 2-core machine
});

// Shorter runs read off one long run, on the tiny test models (issue 37 §2 "Must show"; METHOD.md
// §13.8): `merit grid` runs Iterative and Reflexion at K = 3 and again at K′ = 1 and 2, each with its
// own call cache (no answer shared); read at K′ from the K = 3 run, every query's outcome and LLM tokens
// (prompt + output of its calls) equal the real K′ run's — what greedy decoding promises — and the EX
// at K′ of the curve equals the K′ run's EX.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefixCurve, prefixEpisode } from "../../lib/analysis/prefix-runs.ts";
import { gridCommand } from "../../lib/cli/run.ts";
import { readTrajectories } from "../../lib/experiment/run-dir.ts";
import { budget } from "../helpers/budget.ts";
import { tempDir, TINY_QWEN, writeTinyGridConfig } from "../helpers/run-fixture.ts";

const root = tempDir("prefix-runs-tiny");
afterAll(() => rmSync(root, { recursive: true, force: true }));
const LONG_K = 3;
let config: string;
beforeAll(async () => {
  config = await writeTinyGridConfig(root, { subset: { rule: "initially_failed", initially_correct: 1 }, model: { backend: "llama", path: TINY_QWEN, threads: 1, sequences: 4 }, decoding: { max_output_tokens: 16 } });
}, budget(120_000));

/** The config at K with its own call cache. */
function configAt(k: number): string {
  const file = join(root, `config-k${k}.json`);
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(config, "utf8")), max_repair_steps: k, call_cache: join(root, `calls-k${k}.sqlite`) }));
  return file;
}

async function grid(k: number): Promise<string> {
  const out = join(root, `k${k}`);
  const err: string[] = [];
  expect(await gridCommand.run(["--config", configAt(k), "--methods", "iterative,reflexion", "--seeds", "0", "--limit", "4", "--out", out], { out: () => {}, err: (l) => err.push(l) }), err.join("\n")).toBe(0);
  return out;
}

const bySource = (dir: string) => readTrajectories(dir).sort((x, y) => x.source_index - y.source_index);
const tokens = (t: { prompt_tokens: number[]; output_tokens: number[] }) => t.prompt_tokens.reduce((s, v) => s + v, 0) + t.output_tokens.reduce((s, v) => s + v, 0);

describe("prefix runs on the tiny models", () => {
  it(
    "Iterative and Reflexion at K = 3 read at K′ = 1, 2 equal real K′ runs: per query outcome and LLM tokens, and EX",
    async () => {
      const long = await grid(LONG_K);
      for (const kp of [1, 2]) {
        const short = await grid(kp);
        for (const method of ["iterative", "reflexion"]) {
          const longRun = bySource(join(long, `${method}-s0`));
          const shortRun = bySource(join(short, `${method}-s0`));
          expect(shortRun.map((t) => t.query_id)).toEqual(longRun.map((t) => t.query_id));
          // the long run made more calls than the short one: the comparison is not trivially of equal episodes
          expect(longRun.reduce((n, t) => n + t.call_kinds.length, 0)).toBeGreaterThan(shortRun.reduce((n, t) => n + t.call_kinds.length, 0));
          const read = longRun.map((t) => prefixEpisode(t, LONG_K));
          expect(read.map((e) => e.correct[kp])).toEqual(shortRun.map((t) => t.final_correct));
          expect(read.map((e) => e.tokens[kp])).toEqual(shortRun.map(tokens));
          const curve = prefixCurve([{ trajectories: longRun, k: LONG_K }]);
          expect(curve.ex[kp]).toBeCloseTo((100 * shortRun.filter((t) => t.final_correct).length) / shortRun.length, 10);
        }
      }
    },
    budget(240_000),
  );
});

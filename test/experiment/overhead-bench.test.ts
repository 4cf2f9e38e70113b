// bench/overhead.ts (issue 38 §4) in a tiny configuration: it runs real episodes of MERIT, a baseline
// and a peer on the simulated engine through the kit's run loop, prints the per-attempt stage table,
// the inference rows it is set against, retrieval at a memory size and the composed overhead there,
// with the load average. No wall time is asserted; the numbers are the bench's to report.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";
import { REPO, tempDir } from "../helpers/run-fixture.ts";

const bench = (args: string[]) => spawnSync(process.execPath, [join(REPO, "bench", "overhead.ts"), ...args], { cwd: REPO, encoding: "utf8", timeout: budget(120_000), env: { ...process.env, NO_COLOR: "1" } });

describe("bench/overhead.ts", () => {
  it(
    "prints the stage table per method, the inference it is set against, retrieval at a memory size and the load",
    () => {
      const r = bench(["--queries", "3", "--k", "1", "--methods", "merit,iterative,exprag", "--sizes", "40", "--retrievals", "2"]);
      expect(r.stderr).not.toMatch(/Error/);
      expect(r.status).toBe(0);
      const out = r.stdout;
      expect(out).toMatch(/^load average at start: [\d.]+ [\d.]+ [\d.]+/m);
      expect(out).toContain("| method | episodes | repair attempts | oracle scoring | retrieval | embedding (cache + simulated embedder) | hook bookkeeping | call-cache lookup | trajectory commit |");
      for (const m of ["merit", "iterative", "exprag"]) expect(out).toMatch(new RegExp(`^\\| ${m} \\| 3 \\| \\d+ \\|`, "m"));
      expect(out).toContain("Qwen2.5-7B, one H100");
      // retrieval at size 40: MERIT's retriever over synthetic entries, exprag over 40 notes of its own
      expect(out).toMatch(/^\| merit \(MERIT's retriever, synthetic entries\) \| 40 \| 40 entries \| – \| [\d.]+ \| [\d.]+ \(\d+ warm-ups\) \| [\d.]+ \| [\d.]+ \| – \| – \|$/m);
      expect(out).toMatch(/^\| exprag \| 40 \| 40 experience \| 40 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
      expect(out).toMatch(/^\| merit \| [\d.]+ \| [\d.]+ % \| [\d.]+ % \|$/m);
      expect(out).toMatch(/^load average at end: /m);
    },
    budget(150_000),
  );

  it(
    "its timing wrappers change nothing: a kept run's files equal `merit run`'s on the same config (another call cache)",
    () => {
      const root = tempDir("overhead-keep");
      const kept = join(root, "bench");
      const r = bench(["--queries", "4", "--k", "2", "--methods", "merit,reasoning_bank", "--sizes", "5", "--retrievals", "1", "--keep", kept]);
      expect(r.status).toBe(0);
      const config = JSON.parse(readFileSync(join(kept, "config.json"), "utf8"));
      writeFileSync(join(root, "config.json"), JSON.stringify({ ...config, call_cache: join(root, "calls.sqlite") }));
      for (const method of ["merit", "reasoning_bank"]) {
        const run = spawnSync(process.execPath, [join(REPO, "lib", "bin.mjs"), "run", "--config", join(root, "config.json"), "--method", method, "--seed", "0", "--limit", "4", "--out", join(root, method)], { cwd: REPO, encoding: "utf8", timeout: budget(60_000) });
        expect(run.status, run.stderr).toBe(0);
        for (const file of ["trajectories.jsonl", "retrieval_log.jsonl", "prompts.jsonl", "metrics.json"]) {
          expect(readFileSync(join(root, method, file), "utf8"), `${method} ${file}`).toBe(readFileSync(join(kept, method, file), "utf8"));
        }
      }
    },
    budget(150_000),
  );

  it("refuses a bad memory size or an unknown method with one line and exit 2", () => {
    const r = bench(["--sizes", "0"]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe("bench/overhead.ts: --sizes takes memory sizes ≥ 1, comma-separated (e.g. --sizes 1534,100000)");
    const m = bench(["--methods", "mert"]);
    expect(m.status).toBe(2);
    expect(m.stderr.trim().split("\n")).toHaveLength(1);
    expect(m.stderr).toMatch(/^bench\/overhead\.ts --methods: unknown method "mert" \(did you mean "merit"\?\)/);
  });
});

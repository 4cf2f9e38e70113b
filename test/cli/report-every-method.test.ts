// Tests `merit report`'s method selection (issue 39 §3): every method the runs hold is in Tables 1, 3
// and 5 and the cost table unless the user leaves it out (--methods); a call-kind column of the cost
// table belongs to a shown method, never printed all zero for methods the report left out.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { tokenAccounting } from "../../lib/repair/trajectory-record.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-every-method-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `t` with one more LLM call of kind `critique` (a peer's memory write: 50 prompt, 5 output tokens). */
function withDistill(t: Trajectory): Trajectory {
  const prompt = [...t.prompt_tokens, 50];
  const output = [...t.output_tokens, 5];
  return {
    ...t,
    prompt_tokens: prompt,
    output_tokens: output,
    call_kinds: [...t.call_kinds, "critique"],
    truncated_prompt_tokens: [...t.truncated_prompt_tokens, 0],
    accounting: { ...t.accounting, ...tokenAccounting(prompt, output), llm_calls: prompt.length },
  };
}

// spider, 3 queries; merit and iterative (the paper's), expel_online (a peer that critiques) and
// no_bm25 (an ablation), two seeds each
for (const method of ["merit", "iterative", "expel_online", "no_bm25"]) {
  for (const seed of [0, 1]) {
    const common = { method, stream_seed: seed };
    const lines = [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], ...common }),
      repairTrajectory("1", 1, true, common),
      repairTrajectory("2", method === "iterative" ? 7 : 2, method !== "iterative", common),
    ];
    writeRunDir(join(root, "runs", `${method}-${seed}`), method === "expel_online" ? lines.map(withDistill) : lines);
  }
}

const quiet = { out: () => undefined, err: () => undefined };
const read = (dir: string, ...path: string[]) => readFileSync(join(dir, ...path), "utf8");
/** The method column of a Markdown table (rows after the header; rules "—" kept). */
const methodColumn = (md: string) =>
  md
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| Dataset"))
    .map((l) => l.split(" | ")[1]);

describe("merit report shows every method of the runs", () => {
  it("Tables 1 and 3 and the cost table hold the peer and the ablation, below a rule after the paper's methods", async () => {
    const dest = join(root, "all");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "100", "--no-figures", "--no-curves"], quiet)).toBe(0);
    const expected = ["Iterative", "MERIT", "—", "expel_online", "No BM25"];
    expect(methodColumn(read(dest, "tables", "table1.md"))).toEqual(expected);
    expect(methodColumn(read(dest, "tables", "table3.md"))).toEqual(expected);
    const cost = read(dest, "tables", "cost-by-kind.md");
    expect(methodColumn(cost)).toEqual(["Iterative", "MERIT", "expel_online", "No BM25"]);
    expect(cost).toMatch(/^\| Dataset \| Method \| initial_cache tokens \| repair tokens \| critique tokens \|/m);
    // expel_online: one critique call of 55 tokens per query
    expect(cost).toMatch(/^\| Spider \| expel_online \|( [\d.]+ \|){2} 55\.0 \|/m);
  });

  it("--methods leaves methods out, and a call kind no shown method made gets no column", async () => {
    const dest = join(root, "paper-only");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "100", "--no-figures", "--no-curves", "--methods", "iterative,merit", "--costs"], quiet)).toBe(0);
    expect(methodColumn(read(dest, "tables", "table1.md"))).toEqual(["Iterative", "MERIT"]);
    const cost = read(dest, "tables", "cost-by-kind.md");
    expect(methodColumn(cost)).toEqual(["Iterative", "MERIT"]);
    expect(cost).not.toContain("critique");
    // without --costs, a report of the paper's call kinds only has no cost table at all
    const plain = join(root, "paper-only-plain");
    expect(await reportCommand.run([join(root, "runs"), "--out", plain, "--resamples", "100", "--no-figures", "--no-curves", "--methods", "iterative,merit"], quiet)).toBe(0);
    expect(() => read(plain, "tables", "cost-by-kind.md")).toThrow();
  });
});

// Tests `make reproduce PEERS=1` in small (issue "The peers on the same stream" §3): a grid of the
// shape the Makefile runs — MERIT and every peer (PEER_METHODS) over two stream orders — on the tiny
// test models with K = 1 and four queries (three initially failed, one initially correct): its plan
// first (`merit grid --plan`, nothing written), then the grid, the causal audit of every run
// (0 violations), the equal-budget control (iterative as the arm iterative_budget, K = 1 + the most
// extra calls a peer declares), and `merit report --peers … --conditions max_repair_steps`, which
// writes the peers table listing every peer and the control, and the budget-matched Pareto figure.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditCommand } from "../../lib/cli/audit.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { gridCommand } from "../../lib/cli/run.ts";
import { PEER_METHODS } from "../../lib/experiment/grid-plan.ts";
import { listRuns } from "../../lib/experiment/run-dir.ts";
import { tempDir, TINY_QWEN, writeTinyGridConfig } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";
import { budgetMatchedSteps } from "../../lib/methods/registry.ts";

const root = tempDir("reproduce-peers");
afterAll(() => rmSync(root, { recursive: true, force: true }));
const METHODS = ["merit", ...PEER_METHODS];

let config: string;
beforeAll(async () => {
  config = await writeTinyGridConfig(root, {
    max_repair_steps: 1,
    subset: { rule: "initially_failed", initially_correct: 1 },
    model: { backend: "llama", path: TINY_QWEN, threads: 1, sequences: 4 },
    decoding: { max_output_tokens: 16 },
  });
}, budget(120_000));

describe("make reproduce PEERS=1 on the tiny models", () => {
  it("plans, runs MERIT and every peer, audits each run clean, and reports the peers table and the Pareto figure", async () => {
    const out = join(root, "grid");
    const err: string[] = [];
    const io = (lines: string[]) => ({ out: (l: string) => lines.push(l), err: (l: string) => err.push(l) });
    const grid = ["--config", config, "--methods", METHODS.join(","), "--seeds", "0,1", "--limit", "4", "--out", out];

    const plan: string[] = [];
    expect(await gridCommand.run([...grid, "--plan"], io(plan)), err.join("\n")).toBe(0);
    expect(plan.join("\n")).toMatch(/computed/);
    for (const m of METHODS) expect(plan.join("\n")).toContain(m);
    expect(existsSync(out)).toBe(false); // the plan writes nothing

    expect(await gridCommand.run(grid, io([])), err.join("\n")).toBe(0);
    const runs = listRuns(out);
    expect(runs).toHaveLength(METHODS.length * 2);

    for (const dir of runs) {
      const lines: string[] = [];
      expect(await auditCommand.run([dir], io(lines)), `${dir}: ${lines.join("\n")}`).toBe(0);
      expect(lines.at(-1)).toBe("violations 0");
    }

    // the equal-budget control: iterative given the most extra calls any peer declares per episode
    const control = join(root, "budget");
    const k = Math.max(...PEER_METHODS.map((m) => budgetMatchedSteps(m, 1)));
    expect(k).toBeGreaterThan(1);
    const arm = ["--config", config, "--methods", "iterative", "--arm", "iterative_budget", "--max-repair-steps", `budget:${PEER_METHODS.join(",")}`, "--seeds", "0,1", "--limit", "4", "--out", control];
    expect(await gridCommand.run(arm, io([])), err.join("\n")).toBe(0);
    expect(await gridCommand.run([...arm, "--resume"], io([])), err.join("\n")).toBe(0); // the arm's identity is the same in a new registration
    const controlRuns = listRuns(control);
    expect(controlRuns.map((d) => d.split("/").at(-1))).toEqual(["iterative_budget-s0", "iterative_budget-s1"]);
    for (const dir of controlRuns) {
      expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).config.max_repair_steps).toBe(k);
      const lines: string[] = [];
      expect(await auditCommand.run([dir], io(lines)), `${dir}: ${lines.join("\n")}`).toBe(0);
    }
    // without --conditions the report refuses to pair runs of another K; with it, the control is a row
    const peers = [...PEER_METHODS, "iterative_budget"];
    await expect(reportCommand.run(["--runs", `${out},${control}`, "--out", join(root, "refused"), "--reference", "merit", "--peers", peers.join(","), "--resamples", "50"], io([]))).rejects.toThrow(/max_repair_steps/);
    const dest = join(root, "report");
    expect(await reportCommand.run(["--runs", `${out},${control}`, "--out", dest, "--reference", "merit", "--peers", peers.join(","), "--conditions", "max_repair_steps", "--resamples", "200"], io([])), err.join("\n")).toBe(0);
    const csv = readFileSync(join(dest, "tables", "peers.csv"), "utf8").trim().split("\n");
    expect(csv.slice(1).map((l) => l.split(",")[1])).toEqual(["MERIT", ...peers]);
    expect(readFileSync(join(dest, "tables", "peers.md"), "utf8")).toContain("p (Holm)");
    for (const ext of ["svg", "png"]) expect(existsSync(join(dest, "figures", `peers-pareto.${ext}`))).toBe(true);
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).peers).toEqual({ reference: "merit", peers });
    // tokens per query count every call kind: they equal the cost-by-kind table's total (Table 3's over n), kind by kind summed
    const cost = readFileSync(join(dest, "tables", "cost-by-kind.csv"), "utf8").trim().split("\n").map((l) => l.split(","));
    const total = cost[0].indexOf("LLM tokens (all kinds)");
    const kinds = cost[0].slice(2, total);
    expect(kinds).toEqual(expect.arrayContaining(["repair tokens"]));
    expect(kinds.length).toBeGreaterThan(2); // the peers' own kinds (judge, distill, curate, …) beside initial_cache and repair
    expect(cost[0][total + 2]).toBe("Embedding tokens");
    // MERIT embeds its queries and entries: their tokens are counted (the peers' are in the peers table's tokens below)
    expect(Number(cost.find((r) => r[1] === "MERIT")![total + 2])).toBeGreaterThan(0);
    // the peers table's LLM and embedding tokens per query: two columns, each the cost table's, never added
    const cells = (l: string) => l.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/);
    const header = cells(csv[0]);
    const llm = header.indexOf("LLM tokens / query");
    const embedding = header.indexOf("Embedding tokens / query");
    expect(llm).toBeGreaterThan(0);
    expect(embedding).toBe(llm + 1);
    const peerTokens = new Map(csv.slice(1).map((l) => [cells(l)[1], [Number(cells(l)[llm]), Number(cells(l)[embedding])]]));
    for (const row of cost.slice(1)) {
      expect(peerTokens.get(row[1])![0], row[1]).toBeCloseTo(Number(row[total]), 1);
      expect(peerTokens.get(row[1])![1], row[1]).toBeCloseTo(Number(row[total + 2]), 1);
      expect(kinds.reduce((n, _, k) => n + Number(row[2 + k]), 0)).toBeCloseTo(Number(row[total]), 0);
    }
  }, budget(300_000));
});

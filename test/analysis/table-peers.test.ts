// Tests lib/analysis/table-peers.ts (the peers table, issue "The peers on the same stream" §2–§3) and
// figures.ts paretoPoints / paretoFigure (EX against LLM and embedding tokens) on hand-made runs: Spider with
// MERIT, two peers (reasoning_bank, awm) and a non-peer (iterative) over two stream orders, BIRD with
// MERIT and one peer. Every synthetic call costs 110 tokens initially, 220 per repair (build-trajectory.ts).
import { describe, expect, it } from "vitest";
import { paretoFigure, paretoPoints } from "../../lib/analysis/figures.ts";
import { renderSvg } from "../../lib/analysis/figure-render.ts";
import { holmAdjust } from "../../lib/analysis/holm.ts";
import { summarizeRun, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { renderCsv, renderMarkdown } from "../../lib/analysis/table.ts";
import { peerMethodsOf, peersTable, registeredPeers } from "../../lib/analysis/table-peers.ts";
import { methodDefinition } from "../../lib/methods/index.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

/** Per initially failed query (q1, q2): repair steps and whether the last one is correct; q0 is initially correct. */
type Plan = [steps: number, repaired: boolean][];
const PLANS: Record<string, Record<string, Plan>> = {
  spider: {
    merit: [[1, true], [1, true]], // EX 100, (110 + 330 + 330) / 3 = 256.67 tokens per query
    reasoning_bank: [[1, true], [7, false]], // EX 66.67, (110 + 330 + 1650) / 3 = 696.67
    awm: [[7, false], [7, false]], // EX 33.33, (110 + 1650 + 1650) / 3 = 1136.67: dominated by iterative
    iterative: [[0, false], [0, false]], // EX 33.33, 110: the cheapest
  },
  bird: {
    merit: [[1, true], [7, false]],
    reasoning_bank: [[1, true], [1, true]],
  },
};
const runs: RunSummary[] = Object.entries(PLANS).flatMap(([dataset, methods]) =>
  Object.entries(methods).flatMap(([method, plan]) =>
    [0, 1].map((stream_seed) =>
      summarizeRun([
        buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], dataset, method, stream_seed }),
        ...plan.map(([steps, repaired], i) => repairTrajectory(String(i + 1), steps, repaired, { dataset, method, stream_seed })),
      ]),
    ),
  ),
);
const labels = { spider: "Spider", bird: "BIRD", merit: "MERIT" };

describe("peer methods", () => {
  it("are the registered methods with a citation, in registration order; a run set's are those it holds", () => {
    expect(registeredPeers()).toEqual(["reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory"]);
    expect(peerMethodsOf(runs)).toEqual(["reasoning_bank", "awm"]);
  });
});

describe("peersTable", () => {
  const t = peersTable(runs, { reference: "merit", labels, resamples: 400, paperLayout: true });
  const cells = t.rows.map((r) => r.map((c) => c.text));
  it("one block per dataset: the reference, then each peer with Δ = reference − peer (Table 2's sign), Δ against Iterative, LLM and embedding tokens per query and source", () => {
    expect(t.id).toBe("peers");
    expect(t.columns).toEqual(["Dataset", "Method", "EX", "Δ MERIT − peer (pp)", "95% CI", "p (bootstrap)", "MDE (pp)", "p (Holm)", "Δ method − iterative (pp)", "95% CI", "p (Holm) vs iterative", "LLM tokens / query", "Embedding tokens / query", "Oracle verdict", "Source"]);
    expect(cells.map((r) => [r[0], r[1], r[2], r[3], r[8], r[11], r[12], r[13]])).toEqual([
      ["Spider", "MERIT", "100.00 ± 0.00", "—", "+66.67", "256.7", "—", "—"],
      ["Spider", "reasoning_bank", "66.67 ± 0.00", "+33.33", "+33.33", "696.7", "—", "no"],
      ["Spider", "awm", "33.33 ± 0.00", "+66.67", "0.00", "1136.7", "—", "yes"],
      ["BIRD", "MERIT", "66.67 ± 0.00", "—", "—", "696.7", "—", "—"],
      ["BIRD", "reasoning_bank", "100.00 ± 0.00", "-33.33", "—", "256.7", "—", "no"],
    ]);
    expect(cells[1][14]).toBe(methodDefinition("reasoning_bank").citation);
    expect(cells[2][14]).toBe(methodDefinition("awm").citation);
    expect(t.rulesBefore).toEqual([3]);
    // the reference row has no comparison
    expect(cells[0].slice(3, 8)).toEqual(["—", "—", "—", "—", "—"]);
    // paper layout: best EX per dataset bold, second underlined
    expect(t.rows[0][2].bold).toBe(true);
    expect(t.rows[1][2].underline).toBe(true);
    expect(t.rows[4][2].bold).toBe(true);
  });
  it("p and MDE per peer; Holm over each dataset's peers (one family per dataset)", () => {
    const spider = t.data.filter((r) => r.dataset === "spider" && r.method !== "merit");
    expect(spider.map((r) => r.p_holm)).toEqual(holmAdjust(spider.map((r) => r.p_bootstrap as number)));
    for (const r of spider) {
      expect(r.p_holm as number).toBeGreaterThanOrEqual(r.p_bootstrap as number);
      expect(r.mde as number).toBeGreaterThan(0);
      expect(r.lo as number).toBeLessThanOrEqual(r.delta as number);
      expect(r.hi as number).toBeGreaterThanOrEqual(r.delta as number);
      expect(r.queries).toBe(3);
    }
    const bird = t.data.find((r) => r.dataset === "bird" && r.method === "reasoning_bank")!;
    expect(bird.p_holm).toBe(bird.p_bootstrap); // a family of one
    expect(t.data.find((r) => r.method === "awm")).toMatchObject({ ground_truth: true, llm_tokens_per_query: expect.closeTo(3410 / 3, 9), embedding_tokens_per_query: null, delta: expect.closeTo(200 / 3, 9) });
  });
  it("renders in Markdown and CSV, and the peer family can be given", () => {
    expect(renderMarkdown(t)).toContain("| Spider | reasoning_bank | <u>66.67 ± 0.00</u> | +33.33 |");
    expect(renderCsv(t).split("\n")[0]).toBe("Dataset,Method,EX,Δ MERIT − peer (pp),95% CI,p (bootstrap),MDE (pp),p (Holm),Δ method − iterative (pp),95% CI,p (Holm) vs iterative,LLM tokens / query,Embedding tokens / query,Oracle verdict,Source");
    const only = peersTable(runs, { reference: "merit", peers: ["awm", "iterative"], datasets: ["spider"], resamples: 200 });
    expect(only.rows.map((r) => r[1].text)).toEqual(["merit", "awm", "iterative"]);
    expect(only.rows[2].at(-1)!.text).toBe("—"); // no citation: not a ported work
    expect(() => peersTable(runs, { reference: "merit", peers: ["merit", "awm"] })).toThrow(/also listed as a peer/);
    expect(() => peersTable(runs, { reference: "reflexion" })).toThrow(/no runs of the reference/);
  });
});

describe("the EX-vs-cost view", () => {
  it("marks the non-dominated methods per dataset", () => {
    const points = paretoPoints(runs, { methods: ["merit", "reasoning_bank", "awm", "iterative"] });
    const front = (d: string) => points.filter((p) => p.dataset === d && p.front).map((p) => p.method);
    expect(front("spider")).toEqual(["merit", "iterative"]); // awm costs more than iterative at the same EX; reasoning_bank more than merit at less
    expect(front("bird")).toEqual(["reasoning_bank"]);
    const awm = points.find((p) => p.dataset === "spider" && p.method === "awm")!;
    expect([awm.tokens, awm.ex, awm.front]).toEqual([expect.closeTo(3410 / 3, 9), expect.closeTo(100 / 3, 9), false]);
  });
  it("methods at the same point are on the front together", () => {
    const twin = runs.filter((r) => r.method === "merit").map((r) => ({ ...r, method: "merit_twin" }));
    const points = paretoPoints([...runs, ...twin], { datasets: ["spider"] });
    expect(points.filter((p) => p.front).map((p) => p.method).sort()).toEqual(["iterative", "merit", "merit_twin"]);
  });
  it("renders to SVG with a panel per dataset", async () => {
    const svg = await renderSvg(paretoFigure(runs, { labels }));
    expect(svg).toContain("LLM tokens per query");
    expect(svg).toContain("Spider");
    expect(svg).toContain("BIRD");
    expect(svg).toContain("reasoning_bank");
  });
});

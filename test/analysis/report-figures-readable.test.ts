// Tests issue 37 §3 ("one sign, the right references, legible figures") and §2's second bullet (LLM
// and embedding tokens apart): the peers table's sign, baselines, uninformative notes and token
// columns (lib/analysis/table-peers.ts); one method → colour map per report (figures.ts
// methodColors / methodColorScale); labels that never overprint, checked on the rendered SVG by
// estimated text boxes (figure-labels.ts, figures.ts tokensVsExFigure / paretoFigure); the Pareto
// figure's axes and title; cumulative repairs to each method's own K with whole-step ticks; memory
// size counting only the notes in force (memory-diagnostics.ts runMemorySize, hooks' `replaces`);
// and the learning curves as paired Δ panels (learning-curves.ts panelCurves / learningCurvePanelFigure).
import { describe, expect, it } from "vitest";
import { renderSvg } from "../../lib/analysis/figure-render.ts";
import { placeLabels } from "../../lib/analysis/figure-labels.ts";
import { cumulativeRepairFigure, cumulativeRepairs, integerTicks, methodColorScale, methodColors, paretoFigure, paretoPoints, tokensVsExFigure } from "../../lib/analysis/figures.ts";
import { learningCurvePanelFigure, methodCurves, panelCurves } from "../../lib/analysis/learning-curves.ts";
import { memoryGrowth, memoryGrowthFigure } from "../../lib/analysis/memory-growth.ts";
import { checkHooks } from "../../lib/methods/hooks.ts";
import { runMemorySize, type RunDiagnostics } from "../../lib/analysis/memory-diagnostics.ts";
import { getMethod, noteMemoryOf } from "../../lib/methods/index.ts";
import { stampWrite, type NoteView } from "../../lib/methods/hooks.ts";
import { summarizeRun, type QueryOutcome, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { peersTable } from "../../lib/analysis/table-peers.ts";
import { comparisonTable } from "../../lib/analysis/tables.ts";
import { MeritError } from "../../lib/errors.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { overlappingBoxes, svgTextBoxes } from "../helpers/svg-text-boxes.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

/** Per initially failed query (q1, q2): repair steps and whether the last one is correct; q0 is initially correct. */
type Plan = [steps: number, repaired: boolean][];
const PLANS: Record<string, Plan> = {
  merit: [[1, true], [1, true]], // EX 100
  reasoning_bank: [[1, true], [7, false]], // EX 66.67
  awm: [[7, false], [7, false]], // EX 33.33
  iterative: [[7, false], [1, true]], // EX 66.67
  iterative_budget: [[1, true], [1, true]], // EX 100
};
/** Embedding tokens per run (whole run) of the methods that embed. */
const EMBEDDING: Record<string, number> = { merit: 3000, reasoning_bank: 300 };

function runsOf(plans: Record<string, Plan>, seeds = [0, 1]): RunSummary[] {
  return Object.entries(plans).flatMap(([method, plan]) =>
    seeds.map((stream_seed) => {
      const trajectories: Trajectory[] = [
        buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed }),
        ...plan.map(([steps, repaired], i) => repairTrajectory(String(i + 1), steps, repaired, { method, stream_seed })),
      ];
      if (EMBEDDING[method] !== undefined) trajectories[0] = { ...trajectories[0], accounting: { ...trajectories[0].accounting, embedding_tokens: EMBEDDING[method] } } as Trajectory;
      for (const t of trajectories.slice(1)) if (EMBEDDING[method] !== undefined) (t.accounting as { embedding_tokens?: number }).embedding_tokens = 0;
      return summarizeRun(trajectories, { maxRepairSteps: method === "iterative_budget" ? 9 : 7 });
    }),
  );
}
const runs = runsOf(PLANS);
const labels = { spider: "Spider", merit: "MERIT", iterative: "Iterative" };

describe("the peers table: one sign, the baselines, the uninformative notes, two token columns", () => {
  const t = peersTable(runs, { reference: "merit", peers: ["reasoning_bank", "awm", "iterative_budget"], labels, resamples: 400, paperLayout: true });
  const col = (name: string) => t.columns.indexOf(name);
  const row = (m: string) => t.rows[t.data.findIndex((r) => r.method === m)].map((c) => c.text);
  it("Δ against the reference is reference − peer, the same number Table 2 prints for the pair", () => {
    const table2 = comparisonTable(runs, { reference: "merit", others: ["reasoning_bank", "awm", "iterative_budget"], labels, resamples: 400, paperLayout: true });
    for (const m of ["reasoning_bank", "awm", "iterative_budget"]) {
      expect(t.data.find((r) => r.method === m)!.delta).toBe(table2.data.find((r) => r.other === m)!.delta);
    }
    expect(t.data.find((r) => r.method === "awm")!.delta).toBeCloseTo(100 - 100 / 3, 9); // MERIT 100 − awm 33.33: positive
    expect(t.columns[3]).toBe("Δ MERIT − peer (pp)");
    expect(t.notes[0]).toMatch(/Δ MERIT − peer = EX\(MERIT\) − EX\(peer\), the sign of Table 2/);
  });
  it("every row also against Iterative and the equal-budget control (Δ = method − baseline), Holm per baseline family", () => {
    expect(t.columns).toContain("Δ method − Iterative (pp)");
    expect(t.columns).toContain("Δ method − iterative_budget (pp)");
    expect(row("awm")[col("Δ method − Iterative (pp)")]).toBe("-33.33"); // 33.33 − 66.67
    expect(row("merit")[col("Δ method − Iterative (pp)")]).toBe("+33.33"); // MERIT − Iterative: Table 2's pair and sign
    expect(row("iterative_budget")[col("Δ method − iterative_budget (pp)")]).toBe("—");
    expect(row("iterative_budget")[col("Δ method − Iterative (pp)")]).toBe("+33.33");
    const vsIterative = t.data.filter((r) => r.p_bootstrap_vs_iterative !== null);
    expect(vsIterative).toHaveLength(4);
    for (const r of vsIterative) expect(r.p_holm_vs_iterative as number).toBeGreaterThanOrEqual(r.p_bootstrap_vs_iterative as number);
    expect(t.notes.some((n) => n.startsWith("Δ method − Iterative = EX(row method) − EX(Iterative)"))).toBe(true);
  });
  it("a comparison with identical outcomes gets Table 2's uninformative words, naming the pairs", () => {
    const note = t.notes.find((n) => n.startsWith("Uninformative") && n.includes("identical outcomes"));
    expect(note).toContain("MERIT vs iterative_budget on Spider"); // both 100 % on every query and order
    expect(t.data.find((r) => r.method === "iterative_budget")!.informative).toBe(false);
  });
  it("LLM tokens and embedding tokens per query are two columns, never added", () => {
    const merit = t.data.find((r) => r.method === "merit")!;
    expect(merit.llm_tokens_per_query).toBeCloseTo((110 + 330 + 330) / 3, 9);
    expect(merit.embedding_tokens_per_query).toBeCloseTo(1000, 9);
    expect(t.data.find((r) => r.method === "awm")!.embedding_tokens_per_query).toBeNull(); // not counted: "—", not 0
    expect(row("merit")[col("LLM tokens / query")]).toBe("256.7");
    expect(row("merit")[col("Embedding tokens / query")]).toBe("1000.0");
    expect(t.columns).not.toContain("Tokens / query");
  });
});

describe("one method → colour map per report", () => {
  it("a method keeps its colour in every figure, whatever the figure's own method order", () => {
    const colors = methodColors(["merit", "reasoning_bank", "awm", "iterative", "iterative_budget"]);
    const sel = { labels, colors };
    const scaleOf = (spec: unknown, path: (s: any) => any) => path(spec) as { domain: string[]; range: string[] };
    const color = (scale: { domain: string[]; range: string[] }, name: string) => scale.range[scale.domain.indexOf(name)];
    const repairs = scaleOf(cumulativeRepairFigure(runs, { ...sel, methods: ["awm", "merit"] }), (s) => s.spec.encoding.color.scale);
    const tokens = scaleOf(tokensVsExFigure(runs, { ...sel, methods: ["iterative", "awm", "merit"] }), (s) => s.layer[0].encoding.color.scale);
    for (const scale of [repairs, tokens]) {
      expect(color(scale, "MERIT")).toBe(colors.merit);
      expect(color(scale, "awm")).toBe(colors.awm);
    }
    expect(repairs.domain).toEqual(["awm", "MERIT"]); // the legend lists only the figure's methods
    expect(methodColorScale(["awm"], { labels })).toBeUndefined(); // no map: Vega's default, as before
  });
});

/** Eleven methods, all at one EX and close in tokens: the labels of the demo's peers figure. */
function crowded(): RunSummary[] {
  const names = ["merit", "reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory", "iterative_budget"];
  return names.flatMap((method, i) =>
    [0, 1].map((stream_seed) => {
      const t = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed }), repairTrajectory("1", 1 + (i % 3), false, { method, stream_seed })];
      // tokens differ by a few per cent between methods; three pairs coincide exactly
      (t[1].accounting as { total_tokens: number }).total_tokens += 37 * Math.floor(i / 2);
      (t[0].accounting as { embedding_tokens?: number }).embedding_tokens = i % 4 === 0 ? 0 : 20 * i;
      (t[1].accounting as { embedding_tokens?: number }).embedding_tokens = 0;
      return summarizeRun(t);
    }),
  );
}

describe("labels never overprint", () => {
  it("placeLabels keeps boxes apart for points on one spot", () => {
    const points = Array.from({ length: 8 }, (_, i) => ({ x: 100, y: 100, text: `method_${i}` }));
    const placed = placeLabels(points, 300, 200, 10);
    const boxes = placed.map((p) => ({ x0: p.align === "left" ? p.x : p.x - 70, x1: p.align === "left" ? p.x + 70 : p.x, y0: p.y - 6, y1: p.y + 6 }));
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(Math.min(boxes[i].y1, boxes[j].y1) - Math.max(boxes[i].y0, boxes[j].y0) <= 0 || Math.min(boxes[i].x1, boxes[j].x1) - Math.max(boxes[i].x0, boxes[j].x0) <= 0).toBe(true);
    expect(placed.filter((p) => p.leader).length).toBeGreaterThan(0);
  });
  it("the Pareto and tokens-vs-EX figures of eleven crowded methods: no two label boxes overlap, none rotated", async () => {
    const many = crowded();
    for (const spec of [paretoFigure(many, { labels }), tokensVsExFigure(many, { labels })]) {
      const svg = await renderSvg(spec);
      const labelsDrawn = svgTextBoxes(svg, /mark-text role-mark/);
      expect(labelsDrawn.length).toBeGreaterThanOrEqual(8);
      expect(overlappingBoxes(labelsDrawn)).toEqual([]);
      expect(/<g class="mark-text role-mark[^"]*"[^>]*>(?:(?!<\/g>).)*rotate\(/s.test(svg)).toBe(false);
      for (const name of ["reasoning_bank_oracle", "dynamic_cheatsheet_rs", "error_fix_memory"]) expect(labelsDrawn.map((b) => b.text).join("\n")).toContain(name);
    }
  });
});

describe("the Pareto figure: LLM and embedding tokens on separate axes, an honest title", () => {
  it("points carry LLM tokens alone and embedding tokens apart; a front per axis", () => {
    const points = paretoPoints(runs, { methods: ["merit", "reasoning_bank", "awm", "iterative"] });
    const merit = points.find((p) => p.method === "merit")!;
    expect(merit.tokens).toBeCloseTo((110 + 330 + 330) / 3, 9);
    expect(merit.embeddingTokens).toBeCloseTo(1000, 9);
    expect(points.find((p) => p.method === "awm")!.embeddingTokens).toBeNull();
    expect(points.filter((p) => p.embeddingFront).map((p) => p.method)).toEqual(["merit", "reasoning_bank"]);
  });
  it("a panel per cost axis; the title does not say budget-matched", async () => {
    const spec = paretoFigure(runs, { labels }) as { title: string };
    expect(spec.title).not.toMatch(/budget-matched/i);
    const svg = await renderSvg(spec as never);
    expect(svg).toContain("LLM tokens per query");
    expect(svg).toContain("Embedding tokens per query");
    expect(svg).not.toContain("+ embedding");
  });
});

describe("cumulative repairs", () => {
  it("run to each method's own K, on whole-step ticks", () => {
    const values = cumulativeRepairs(runs, { methods: ["merit", "iterative_budget"] }, 7);
    expect(Math.max(...values.filter((v) => v.method === "merit").map((v) => v.step))).toBe(7);
    expect(Math.max(...values.filter((v) => v.method === "iterative_budget").map((v) => v.step))).toBe(9);
    const spec = cumulativeRepairFigure(runs, { methods: ["merit", "iterative_budget"] }, 7) as { spec: { encoding: { x: { axis: { values: number[] }; scale: { domain: number[] } } } } };
    expect(spec.spec.encoding.x.scale.domain).toEqual([0, 9]);
    expect(spec.spec.encoding.x.axis.values).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(integerTicks(2)).toEqual([0, 1, 2]);
    expect(integerTicks(45).every((v) => Number.isInteger(v))).toBe(true);
  });
});

describe("memory size counts the memory in force", () => {
  /** A run whose episodes at `positions` each wrote one note of `kind`; with `replace`, each note retires the one before (as `replaces` makes the kit record). */
  function notesRun(method: string, kind: string, positions: number[], replace: boolean): RunDiagnostics {
    let previous: string | null = null;
    const trajectories = [0, 1, 2, 3, 4].map((p) => {
      const t = { ...buildTrajectory({ query_id: String(p), attempts: ["SELECT 1"], statuses: ["CORRECT"], method }), stream_position: p } as Trajectory;
      if (positions.includes(p)) {
        t.memory_writes = [{ note_id: `n${p}`, kind, text: `v${p}`, key: `v${p}`, polarity: "neutral", data: null, source_query_id: String(p), source_db_id: "db", source_stream_position: p, source_episode_id: `e${p}` }];
        if (replace && previous !== null) t.memory_retires = [previous];
        previous = `n${p}`;
      }
      return t;
    });
    return { dataset: "spider", method, stream_seed: 0, trajectories, retrievalLog: [], entryBirths: null };
  }
  it("the replace-style peers declare what they replace", () => {
    expect(noteMemoryOf(getMethod("dynamic_cheatsheet"))?.replaces).toEqual(["cheatsheet"]);
    expect(noteMemoryOf(getMethod("awm"))?.replaces).toEqual(["workflows"]);
    expect(noteMemoryOf(getMethod("expel_online"))?.replaces).toEqual(["insights"]);
    expect(noteMemoryOf(getMethod("exprag"))?.replaces ?? []).toEqual([]);
  });
  it("a note of a kind the memory replaces retires the earlier notes of its kind when it is written", () => {
    const source = (p: number) => ({ queryId: String(p), dbId: "db", streamPosition: p, episodeId: `e${p}` });
    const first = stampWrite("dynamic_cheatsheet", source(0), [{ kind: "cheatsheet", text: "v0" }], [], ["cheatsheet"]);
    expect(first.retired).toEqual([]);
    const view = { ...first.notes[0], vector: null } as NoteView;
    const other = { ...stampWrite("dynamic_cheatsheet", source(1), [{ kind: "lesson", text: "l1" }], [], ["cheatsheet"]).notes[0], vector: null } as NoteView;
    const second = stampWrite("dynamic_cheatsheet", source(2), [{ kind: "cheatsheet", text: "v2" }], [view, other], ["cheatsheet"]);
    expect(second.retired).toEqual([view.note_id]);
    // without `replaces` nothing is retired
    expect(stampWrite("exprag", source(2), [{ kind: "cheatsheet", text: "v2" }], [view, other]).retired).toEqual([]);
  });
  it("a cheatsheet rewritten three times is one sheet in memory; an accumulating memory keeps every note", () => {
    const sheet = memoryGrowth([runMemorySize(notesRun("dynamic_cheatsheet", "cheatsheet", [0, 2, 4], true))]);
    expect(Math.max(...sheet.map((p) => p.entries))).toBe(1);
    expect(sheet.at(-1)!.entries).toBe(1);
    const kept = memoryGrowth([runMemorySize(notesRun("exprag", "experience", [0, 2, 4], false))]);
    expect(kept.at(-1)!.entries).toBe(3);
  });
});

describe("learning curves as paired Δ panels", () => {
  /** A summary whose stream visits `order`, with final correctness per id (initial: 0 correct, the rest failed). */
  function streamRun(method: string, seed: number, order: string[], final: Record<string, boolean>): RunSummary {
    const queries: QueryOutcome[] = order
      .map((id, p) => ({ query_id: id, source_index: Number(id), initial_sql: "SELECT 1", initial_error_type: null, initial_correct: id === "0", final_correct: final[id], repair_steps: 0, stream_position: p }))
      .sort((x, y) => x.source_index - y.source_index);
    return { dataset: "spider", method, stream_seed: seed, metrics: {} as RunSummary["metrics"], queries };
  }
  const orders = [["0", "1", "2", "3"], ["3", "2", "1", "0"]];
  const good = { "0": true, "1": true, "2": true, "3": false };
  const poor = { "0": true, "1": false, "2": false, "3": false };
  const ref = orders.map((o, s) => streamRun("merit", s, o, good));
  const other = orders.map((o, s) => streamRun("iterative", s, o, poor));
  it("Δ = reference − method of the mean curves, each order's own difference, and a band around it", () => {
    const d = panelCurves(other, ref, { resamples: 200 });
    const a = methodCurves(ref, { resamples: 10 });
    const b = methodCurves(other, { resamples: 10 });
    for (let p = 0; p < 4; p++) expect(d.ex.mean[p]).toBeCloseTo(a.ex.mean[p] - b.ex.mean[p], 10);
    expect(d.ex.mean[3]).toBeCloseTo(50, 10); // 75 % − 25 % at the end, Table 2's MERIT − Iterative
    expect(d.ex.orders).toHaveLength(2);
    expect(d.ex.orders[0][0]).toBe(0); // order 0 starts with query 0, right for both
    for (let p = 0; p < 4; p++) {
      expect(d.ex.lo[p]).toBeLessThanOrEqual(d.ex.mean[p]);
      expect(d.ex.hi[p]).toBeGreaterThanOrEqual(d.ex.mean[p]);
    }
    // the band is paired: a method against itself has a zero band everywhere
    const self = panelCurves(ref, ref, { resamples: 100 });
    expect([...self.ex.lo, ...self.ex.hi]).toEqual(Array(8).fill(0));
  });
  it("refuses a method over other seeds than the reference", () => {
    expect(() => panelCurves([other[0]], ref)).toThrow(MeritError);
  });
  it("the figure: the reference's own panel, then one Δ panel per method, in the report's colours — no panel holds two methods", async () => {
    const three = [...ref, ...other, ...orders.map((o, s) => streamRun("awm", s, o, poor))];
    const colors = methodColors(["merit", "iterative", "awm"]);
    const spec = learningCurvePanelFigure(three, { labels, colors }, { resamples: 50, reference: "merit" });
    const svg = await renderSvg(spec);
    for (const panel of ["MERIT − Iterative", "MERIT − awm"]) expect(svg).toContain(panel);
    expect(svg).not.toContain('opacity="0.18"');
    expect((spec as { title: string }).title).toContain("Δ = MERIT − method");
    expect(svg).toContain(colors.awm);
  });
});

describe("learning curves: a method the reference cannot be paired with", () => {
  it("keeps its own curve panel, named so, instead of failing the report", async () => {
    const mk = (method: string, seed: number) => ({ dataset: "spider", method, stream_seed: seed, metrics: {} as RunSummary["metrics"], queries: ["0", "1"].map((id, p) => ({ query_id: id, source_index: Number(id), initial_sql: "SELECT 1", initial_error_type: null, initial_correct: id === "0", final_correct: id === "0", repair_steps: 0, stream_position: p })) });
    const spec = learningCurvePanelFigure([mk("merit", 0), mk("merit", 1), mk("awm", 0)], { labels }, { resamples: 20, reference: "merit" });
    expect(await renderSvg(spec)).toContain("awm (own curve: not paired with MERIT");
  });
});

describe("memory hooks declare what a newer note replaces", () => {
  it("checkHooks refuses a replaces list that is not note kinds", () => {
    const memory = { name: "m", heading: "H", write: () => [], retrieve: () => [] };
    expect(() => checkHooks("m", { memory: { ...memory, replaces: ["Sheet!"] } })).toThrow(/memory.replaces must list note kinds/);
    expect(() => checkHooks("m", { memory: { ...memory, replaces: ["cheatsheet"] } })).not.toThrow();
  });
});

describe("memory size figure: small multiples", () => {
  it("one panel per method, so identical curves never hide each other", async () => {
    const runs = [
      { dataset: "spider", method: "awm", stream_seed: 0, stream_length: 3, births: [] },
      { dataset: "spider", method: "exprag", stream_seed: 0, stream_length: 3, births: [] },
    ];
    const svg = await renderSvg(memoryGrowthFigure(runs));
    for (const m of ["awm", "exprag"]) expect(svg).toContain(`>${m}</text>`);
    expect((svg.match(/role-axis-title[^>]*>(?:<[^>]*>)*?<text[^>]*>Memory entries/g) ?? []).length).toBeGreaterThanOrEqual(2); // an axis per panel
  });
});

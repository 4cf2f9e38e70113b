// Tests lib/experiment/grid-plan.ts (`merit grid --plan`, issue 22 §1): on a tiny-model grid of a
// memoryless method over two stream orders, a reflecting one, two memory methods (one storing
// positives only) and zeroshot, the plan's computed calls equal the calls the run then computes (the
// tiny random model never repairs, so the plan's "if no repair succeeds" count is the exact one), its
// repeats equal the run's cache hits, and after the run the plan replays every memoryless call from
// the cache.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../../lib/cli/run.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { getMethod, hookCallBound } from "../../lib/methods/index.ts";
import { closedFormPlan, CONTROL_METHODS, episodeCallBound, kitBound, paperGridEstimate, PEER_METHODS, planGrid, REPRODUCE_METHODS, type GridPlan } from "../../lib/experiment/grid-plan.ts";
import { registeredPeers } from "../../lib/analysis/table-peers.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import type { CallCacheStats } from "../../lib/llm/call-cache.ts";
import { SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("grid-plan");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const METHODS = ["zeroshot", "iterative", "reflexion", "merit", "dynamic_rag"];
const SEEDS = [0, 1];
const LIMIT = 4; // 3 initially failed queries and 1 initially correct one (the config's subset rule)
const K = 2;

describe("episodeCallBound and kitBound", () => {
  it("is K repairs (episodeCallBound); with Reflexion's reflections (its step's K + 1) 2K + 1 calls (kitBound); none without repairs or with K = 0", () => {
    const [iterative, reflexion, zeroshot] = ["iterative", "reflexion", "zeroshot"].map(getMethod);
    expect(episodeCallBound(iterative, 7)).toBe(7);
    expect(episodeCallBound(reflexion, 7)).toBe(7);
    expect(hookCallBound(reflexion, 7)).toBe(8);
    expect(kitBound(iterative, 7)).toBe(7);
    expect(kitBound(reflexion, 7)).toBe(15);
    expect(episodeCallBound(zeroshot, 7)).toBe(0);
    expect(kitBound(zeroshot, 7)).toBe(0);
    expect(episodeCallBound(reflexion, 0)).toBe(0);
    expect(kitBound(reflexion, 0)).toBe(0);
  });
});

describe("closedFormPlan and the paper grid (README \"The full grid on one GPU\")", () => {
  it("counts the paper grid's calls from its initial failures: 425 on Spider, 945 on BIRD", () => {
    const est = paperGridEstimate();
    const [spider, bird] = est.datasets;
    expect([spider.failed, bird.failed]).toEqual([425, 945]);
    const by = (p: typeof spider.plan, m: string) => p.methods.find((x) => x.method === m)!;
    expect(by(spider.plan, "iterative").computedAtMost).toBe(2975); // F·K, once for the three orders
    expect(by(spider.plan, "reflexion").computedAtMost).toBe(6375); // F·(2K + 1), once
    expect(by(spider.plan, "merit").computedAtMost).toBe(3 * 424 * 7); // 3 orders × (F − 1)·K
    expect([spider.plan.computedAtMost, bird.plan.computedAtMost, est.calls]).toEqual([89486, 199206, 288692]);
    expect([spider.plan.computed, bird.plan.computed]).toEqual([71678, 159558]); // dynamic_rag, positive_only: iterative's calls
    expect([spider.controls.computedAtMost, bird.controls.computedAtMost]).toEqual([8925, 19845]); // transductive_batch 3·F·K
    const all = [...REPRODUCE_METHODS, ...CONTROL_METHODS];
    expect(closedFormPlan({ methods: all, failed: 425, k: 7, orders: 3 }).everyStream + closedFormPlan({ methods: all, failed: 945, k: 7, orders: 3 }).everyStream).toBe(378120);
    expect(est.promptTokensBound).toBe(288692 * 4096);
    expect(est.generatedTokensBound).toBe(288692 * 512);
    expect((est.promptTokens + est.generatedTokens) / 1e9).toBeCloseTo(0.617, 3);
    expect(est.generatedTokens / 1e6).toBeCloseTo(38.2, 1);
  });

  it("REPRODUCE_METHODS is the Makefile's PAPER_METHODS, and CONTROL_METHODS its CONTROL_METHODS", () => {
    const makefile = readFileSync(new URL("../../Makefile", import.meta.url), "utf8");
    expect(/^PAPER_METHODS := (.*)$/m.exec(makefile)?.[1].split(",")).toEqual(REPRODUCE_METHODS);
    expect(/^CONTROL_METHODS := (.*)$/m.exec(makefile)?.[1].split(",")).toEqual(CONTROL_METHODS);
  });

  it("PEER_METHODS is the Makefile's PEER_METHODS and every registered peer (a method with a citation), and PEERS=1 adds them to the grid and the report", () => {
    const makefile = readFileSync(new URL("../../Makefile", import.meta.url), "utf8");
    expect(/^PEER_METHODS := (.*)$/m.exec(makefile)?.[1].split(",")).toEqual(PEER_METHODS);
    expect(registeredPeers()).toEqual(PEER_METHODS);
    expect(PEER_METHODS.filter((m) => REPRODUCE_METHODS.includes(m) || CONTROL_METHODS.includes(m))).toEqual([]);
    expect(makefile).toMatch(/^GRID_METHODS := .*\$\(if \$\(filter 1,\$\(PEERS\)\),\$\(comma\)\$\(PEER_METHODS\),\)$/m);
    expect(makefile).toMatch(/^PEER_REPORT := \$\(if \$\(filter 1,\$\(PEERS\)\),--peers \$\(PEER_METHODS\)\$\(comma\)\$\(BUDGET_ARM\) --conditions max_repair_steps,\)$/m);
    expect(makefile).toMatch(/\$\(MERIT\) report .*\$\(PEER_REPORT\)/);
  });

  it("without the memoryless twin in the grid, a memory method's first episode per order is its own", () => {
    expect(closedFormPlan({ methods: ["merit"], failed: 5, k: 2, orders: 3 }).computedAtMost).toBe(3 * 5 * 2);
    expect(closedFormPlan({ methods: ["iterative", "merit"], failed: 5, k: 2, orders: 3 }).methods[1].computedAtMost).toBe(3 * 4 * 2);
    expect(closedFormPlan({ methods: ["iterative"], failed: 0, k: 7, orders: 3 }).computedAtMost).toBe(0);
    expect(() => closedFormPlan({ methods: ["iterative"], failed: -1, k: 7, orders: 3 })).toThrow(/failed, k must be integers/);
  });
});

describe("merit grid --plan on a tiny-model grid", () => {
  let configFile: string;
  beforeAll(async () => {
    const initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
    configFile = join(root, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        dataset: "spider",
        data_dir: SPIDER_DIR,
        initial_cache: initialCache,
        call_cache: join(root, "calls.sqlite"),
        protocol: "merit",
        max_repair_steps: K,
        subset: { rule: "initially_failed", initially_correct: 1 },
        model: { backend: "llama", path: TINY_QWEN, threads: 1, sequences: 4 },
        embedder: { backend: "llama", path: TINY_BGE },
        decoding: { max_output_tokens: 16 },
      }),
    );
  }, budget(120_000));

  it("plans exactly the calls the run computes, and the repeats the cache answers", async () => {
    const config = loadConfig(configFile);
    const streams = planStreams(METHODS, SEEDS, join(root, "grid"));
    const before = await planGrid(config, streams, { limit: LIMIT });
    expect(existsSync(config.call_cache)).toBe(false); // the plan wrote nothing
    const byMethod = Object.fromEntries(before.methods.map((m) => [m.method, m]));
    const failed = byMethod.iterative.repairEpisodes / SEEDS.length;
    expect(failed).toBe(3);
    // zeroshot: no calls; iterative and reflexion: one order's calls, the other order repeats them;
    // merit: the first failed episode of each order has an empty memory (= iterative's), the others are its own
    expect(byMethod.zeroshot).toMatchObject({ computed: 0, repeats: 0, role: "control", orderIndependent: true });
    expect(byMethod.iterative).toMatchObject({ computed: failed * K, repeats: failed * K, cached: 0, orderIndependent: true, role: "paper" });
    expect(byMethod.reflexion).toMatchObject({ computed: failed * (2 * K + 1), repeats: failed * (2 * K + 1) });
    expect(byMethod.merit).toMatchObject({ computed: SEEDS.length * (failed - 1) * K, repeats: SEEDS.length * K, orderIndependent: false });
    expect(byMethod.merit.computedAtMost).toBe(byMethod.merit.computed);
    // dynamic_rag stores positives only: if no repair succeeds its memory stays empty and every episode
    // is iterative's; whatever the repairs do, the episodes after the first may see entries
    expect(byMethod.dynamic_rag).toMatchObject({ computed: 0, repeats: SEEDS.length * failed * K, computedAtMost: SEEDS.length * (failed - 1) * K });
    expect(before.computed).toBe(failed * K + failed * (2 * K + 1) + SEEDS.length * (failed - 1) * K);
    expect(before.computedAtMost).toBe(before.computed + SEEDS.length * (failed - 1) * K);
    expect(before.promptTokensBound).toBe(before.computedAtMost * 4096);
    expect(before.outputTokensBound).toBe(before.computedAtMost * 16);
    // The closed form (the paper-grid estimate's counting) gives the same counts from F alone.
    const closed = closedFormPlan({ methods: METHODS, failed, k: K, orders: SEEDS.length });
    expect(closed.methods.map((m) => [m.method, m.computed, m.computedAtMost])).toEqual(before.methods.map((m) => [m.method, m.computed, m.computedAtMost]));

    let stats: CallCacheStats | null = null;
    await runGrid(config, streams, { limit: LIMIT, onFinished: (s) => (stats = s) });
    expect(stats).not.toBeNull();
    expect(stats!.computed).toBe(before.computed);
    expect(stats!.hits).toBe(before.repeats);

    // After the run: every memoryless (and empty-memory) call replays from the cache; only the memory
    // episodes whose memory holds entries stay planned (their prompts need the retrieval)
    const after = await planGrid(config, streams, { limit: LIMIT });
    // the cache is read under the keys the run wrote (lib/llm/llama-identity.ts, without loading the model)
    expect(before.cacheNotConsulted).toMatch(/does not exist yet/);
    expect(after.cacheNotConsulted).toBeNull();
    const afterBy = Object.fromEntries(after.methods.map((m) => [m.method, m]));
    expect(afterBy.iterative).toMatchObject({ computed: 0, repeats: 0, cached: 2 * failed * K });
    expect(afterBy.reflexion).toMatchObject({ computed: 0, repeats: 0, cached: 2 * failed * (2 * K + 1) });
    expect(afterBy.merit).toMatchObject({ computed: byMethod.merit.computed, cached: SEEDS.length * K });
    expect(afterBy.dynamic_rag).toMatchObject({ computed: 0, repeats: 0, cached: SEEDS.length * failed * K, computedAtMost: 0 });
    expect(after.computed).toBe(byMethod.merit.computed);

    // and a second grid on the same cache computes nothing
    let again: CallCacheStats | null = null;
    await runGrid(config, planStreams(METHODS, SEEDS, join(root, "again")), { limit: LIMIT, onFinished: (s) => (again = s) });
    expect(again!.computed).toBe(0);
  }, budget(600_000));

  it("merit grid --plan --json prints the plan and writes nothing", async () => {
    const out: string[] = [];
    const io = { out: (line: string) => out.push(line), err: () => undefined };
    const grid = join(root, "cli");
    expect(await gridCommand.run(["--config", configFile, "--methods", "iterative,merit", "--seeds", "0,1", "--limit", String(LIMIT), "--out", grid, "--plan", "--json"], io)).toBe(0);
    const plan = JSON.parse(out.join("\n")) as GridPlan;
    expect(plan.streams).toBe(4);
    expect(plan.methods.map((m) => m.method)).toEqual(["iterative", "merit"]);
    expect(existsSync(grid)).toBe(false);
    out.length = 0;
    expect(await gridCommand.run(["--config", configFile, "--methods", "iterative,transductive_batch", "--seeds", "0", "--limit", String(LIMIT), "--plan"], io)).toBe(0);
    expect(out.join("\n")).toMatch(/controls \(no table of the paper reads them\): transductive_batch/);
    await expect(gridCommand.run(["--config", configFile, "--methods", "iterative", "--json"], io)).rejects.toThrow(/--json goes with --plan/);
  }, budget(120_000));
});

// A study's setting (issue 37 §4, issue 39 #4, #14): its stream orders (`orders`: seeds of the
// paper's shuffle and structured orders, each run and reported apart), the Spider database set it is
// scored on (the paper's test-suite databases by default for real models, refused with the study's
// own opt-out when they are absent; the tiny models' single set stated), the notes every table of its
// report carries, and the plan's GPU hours at stated rates.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ASSUMED_GPU_RATES, gpuRate, gridBudget, MEASURED_KIT_OVERHEAD_S, planLines, planStudy } from "../../lib/analysis/study-plan.ts";
import { runSetting } from "../../lib/analysis/run-setting.ts";
import type { RunIdentity } from "../../lib/analysis/run-directory.ts";
import { studyDatabasesLine, studyReportLayout } from "../../lib/experiment/study-grid.ts";
import { defineStudy, orderResults, orderRunRoot, realModels, registerStudyArms, server, studyConfig, studyOrders, studyPaths, tinyModels } from "../../lib/experiment/study.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-study-setting-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const base = { name: "setting-t", methods: ["iterative", "merit"], reference: "merit", queries: 4 };

describe("orders", () => {
  it("seeds and structured orders: each structured order at seed 0, in its own run root and report folder, with its config order", () => {
    const study = defineStudy({ ...base, orders: [0, 1, 2, "by_database", "easy_to_hard"] });
    expect(study.seeds).toEqual([0, 1, 2]);
    expect(studyOrders(study)).toEqual([{ kind: "random", seeds: [0, 1, 2] }, { kind: "by_database", seeds: [0] }, { kind: "easy_to_hard", seeds: [0] }]);
    const paths = studyPaths(study);
    expect(orderRunRoot(paths, "spider", "random")).toBe(join("runs", "studies", "setting-t", "spider"));
    expect(orderRunRoot(paths, "spider", "by_database")).toBe(join("runs", "studies", "setting-t", "order-by_database", "spider"));
    expect(orderResults(paths, "easy_to_hard")).toBe(join("results", "studies", "setting-t", "order-easy_to_hard"));
    expect(studyConfig(study, "spider", paths, undefined, "by_database").order).toBe("by_database");
    expect(studyConfig(study, "spider", paths).order).toBeUndefined();
    // runs: 2 methods × (3 seeds + 2 structured orders)
    expect(gridBudget(study, [{ dataset: "spider", queries: 4, failed: 3, exact: false, available: 1034 }], () => false)[0].runs).toBe(10);
  });

  it("refuses orders beside seeds, no seed at all, an order twice and an unknown order, in one line", () => {
    expect(() => defineStudy({ ...base, seeds: [0], orders: [1] })).toThrow(/give the stream orders once, as seeds or as orders/);
    expect(() => defineStudy({ ...base, orders: ["by_database"] })).toThrow(/orders lists no seed of the paper's shuffle; add one \(e\.g\. orders: \[0, "by_database"\]\)/);
    expect(() => defineStudy({ ...base, orders: [0, "drift", "drift"] })).toThrow(/orders lists "drift" twice/);
    expect(() => defineStudy({ ...base, orders: [0, "sorted" as never] })).toThrow(/^defineStudy: orders\.1: /);
    expect(() => defineStudy({ ...base, orders: [0, "random" as never] })).toThrow(/random is the paper's shuffle/);
  });

  it("every table note of a report over a structured order names it; a study's report names the paper's shuffle and the database set too", () => {
    const id = (seed: number, extra: Partial<RunIdentity> = {}) => ({ dir: "d", dataset: "spider", method: "merit", stream_seed: seed, database_set: "single", ...extra }) as RunIdentity;
    expect(runSetting([id(0), id(1)], false)).toBeNull(); // the paper's orders, no study: bytes of such reports unchanged
    expect(runSetting([id(0), id(1)], true)).toEqual({
      notes: ["Stream orders: the paper's seeded shuffle (config order random), seeds 0, 1.", "Databases: spider scored on its single databases, one per db_id (not the paper's test-suite EX)."],
      record: { stream_order: "random", seeds: [0, 1], database_sets: { spider: "single" } },
    });
    const structured = runSetting([id(0, { order: "by_database", database_set: "test-suite" })], false)!;
    expect(structured.notes[0]).toBe("Stream order: by_database (config order; METHOD.md §7), seed 0: every number here is over this order only, not over the paper's shuffled orders.");
    expect(structured.notes[1]).toBe("Databases: spider scored on the test-suite databases (the paper's protocol).");
    expect(structured.record.stream_order).toBe("by_database");
  });
});

describe("the database set", () => {
  it("real and served models: the test-suite databases (the paper's protocol); the tiny models: the single ones, stated; databases: \"single\" opts out", () => {
    const paths = studyPaths(defineStudy(base));
    expect(studyConfig(defineStudy({ ...base, models: realModels() }), "spider", paths).test_suite_databases).toBe("data/spider_test_suite/database");
    expect(studyConfig(defineStudy({ ...base, models: server({ base_urls: ["http://gpu1:8000/v1"] }) }), "spider", paths).test_suite_databases).toBe("data/spider_test_suite/database");
    expect(studyConfig(defineStudy({ ...base, models: realModels(), databases: "single" }), "spider", paths).test_suite_databases).toBeUndefined();
    expect(studyConfig(defineStudy({ ...base, models: tinyModels() }), "spider", paths).test_suite_databases).toBeUndefined();
    expect(studyConfig(defineStudy({ ...base, datasets: ["bird"], models: realModels() }), "bird", paths).test_suite_databases).toBeUndefined();
    expect(studyDatabasesLine(defineStudy(base))).toBe("databases: spider on its single databases (one per db_id; not the paper's test-suite EX; the tiny test models' default, as merit demo)");
    expect(studyDatabasesLine(defineStudy({ ...base, models: realModels() }))).toBe("databases: spider on the test-suite databases of data/spider_test_suite/database (the paper's protocol; the default)");
  });

  it("merit study plan of a real-model Spider study without the test-suite databases: one line with the study's opt-out, never --allow-single-db", async () => {
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    const lib = JSON.stringify(pathToFileURL(join(process.cwd(), "lib", "experiment", "study.ts")).href);
    const write = (name: string, extra: string) => {
      writeFileSync(join(tmp, `${name}.ts`), `import { defineStudy, realModels } from ${lib};\nexport default defineStudy({ name: ${JSON.stringify(name)}, methods: ["iterative", "merit"], reference: "merit", queries: 4, models: realModels()${extra} });\n`);
      return join(tmp, `${name}.ts`);
    };
    const refused = planStudy(write("needs-ts", ""), { runs: join(tmp, "runs-a") });
    await expect(refused).rejects.toThrow(/needs-ts\.ts \(spider\) scores Spider on the test-suite databases in data\/spider_test_suite\/database \(the paper's protocol\), but .*; run `make data-spider` .*, or set databases: "single" in the study file to score on the single databases/);
    await expect(refused).rejects.not.toThrow(/--allow-single-db/);
    const plan = await planStudy(write("single-ok", `, databases: "single"`), { runs: join(tmp, "runs-b") });
    expect(plan.lines).toContain(`databases: spider on its single databases (one per db_id; not the paper's test-suite EX; databases: "single")`);
    // GPU hours beside the CPU estimate, at the stated rates: K = 7 repairs of at most 4 failed queries × 2 methods
    const gpu = plan.lines.find((l) => l.startsWith("GPU time: "));
    expect(gpu).toMatch(/^GPU time: at most [\d.]+ GPU hours? on one GPU \(gpu: "auto"; at most 4096 prompt tokens at 2000\/s \+ 512 output tokens at 50\/s = 12\.3 s per call, planning rates below llama\.cpp's published 7B Q4 GPU benchmarks .*; \+ \d+ ms of the kit's own work \(oracle, retrieval, hooks, call cache, commit\) measured by bench\/overhead\.ts\), beside the ~\d+ min above$/);
  });
});

describe("GPU hours", () => {
  it("only for models on a GPU: local GGUFs with gpu auto or a named backend, and servers; never the tiny models or gpu: false", () => {
    const config = studyConfig(defineStudy(base), "spider", studyPaths(defineStudy(base)));
    expect(gpuRate(defineStudy(base), config)).toBeUndefined();
    expect(gpuRate(defineStudy({ ...base, models: realModels({ gpu: false }) }), config)).toBeUndefined();
    expect(gpuRate(defineStudy({ ...base, models: realModels({ gpu: "cuda" }) }), { ...config, decoding: { ...config.decoding, max_input_tokens: 2000, max_output_tokens: 100 } })?.seconds).toBe(2000 / ASSUMED_GPU_RATES.prompt_tokens_per_s + 100 / ASSUMED_GPU_RATES.output_tokens_per_s + MEASURED_KIT_OVERHEAD_S);
    expect(gpuRate(defineStudy({ ...base, models: server({ base_urls: ["http://g:1/v1"] }) }), config)?.seconds).toBe(1 + MEASURED_KIT_OVERHEAD_S);
    const study = defineStudy(base);
    const streams = [{ dataset: "spider", queries: 4, failed: 3, exact: false, available: 1034 }];
    const lines = planLines(study, streams, gridBudget(study, streams, () => false), { seconds: 20, source: "cpu" }, { tokens: 1000, source: "x" }, [], 2, { seconds: 3600 / 42, source: "stated" });
    expect(lines).toContain("GPU time: at most 1.0 GPU hours on one GPU (stated), beside the ~14 min above");
  });
});

describe("a study's peers table", () => {
  it("holds the equal-budget control whenever the study runs one (the Holm family over the peers and it)", () => {
    const study = defineStudy({ ...base, name: "peers-ctl-t", methods: ["iterative", "merit", "reasoning_bank", "iterative_budget_ctl_t"], arms: { iterative_budget_ctl_t: { method: "iterative", max_repair_steps: 9 } } });
    registerStudyArms(study);
    expect(studyReportLayout(study)).toMatchObject({ peers: ["reasoning_bank", "iterative_budget_ctl_t"], setting: true });
    const none = defineStudy({ ...base, name: "peers-none-t", methods: ["iterative", "merit", "reasoning_bank"] });
    expect(studyReportLayout(none).peers).toBeUndefined(); // no control: the report's default family (its peers)
  });
});

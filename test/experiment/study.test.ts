// Tests lib/experiment/study.ts: defineStudy's defaults and refusals, the experiment config each
// model preset gives, loading a study file, and the paths it names (relative to the study file).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkStudyFiles, checkStudyNames, defineStudy, initialPredictions, loadStudyFile, realModels, server, studyConfig, studyPaths, studyPluginFiles, subsetText, tinyModels, simulatedModels } from "../../lib/experiment/study.ts";
import { TINY_CHAT, TINY_EMBEDDER } from "../../lib/experiment/quick-config.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-study-lib-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const minimal = { name: "s1", methods: ["iterative", "merit"], reference: "merit" };

describe("defineStudy", () => {
  it("fills the defaults: Spider, seed 0, all queries, K = 7, tiny models, reference vs every other method", () => {
    const s = defineStudy({ ...minimal, methods: ["iterative", "reflexion", "merit"] });
    expect(s).toMatchObject({ datasets: ["spider"], seeds: [0], queries: null, max_repair_steps: 7, models: { kind: "tiny" }, plugins: [], initial: {} });
    expect(s.comparisons).toEqual([["merit", "iterative"], ["merit", "reflexion"]]);
    expect(defineStudy({ ...minimal, comparisons: [["iterative", "merit"]] }).comparisons).toEqual([["iterative", "merit"]]);
  });

  it("refuses, in one line naming the field: a bad name, an unknown key, a method twice, a comparison outside methods or with itself", () => {
    expect(() => defineStudy({ ...minimal, name: "My Study" })).toThrow(/^defineStudy: name: lower-case letters/);
    expect(() => defineStudy({ ...minimal, seed: 1 } as never)).toThrow(/^defineStudy: \(root\): Unrecognized key\(s\) in object: 'seed'/);
    expect(() => defineStudy({ ...minimal, methods: ["merit", "merit"] })).toThrow(/"merit" is listed twice/);
    expect(() => defineStudy({ ...minimal, comparisons: [["merit", "reflexion"]] })).toThrow(/"reflexion" is compared but not in methods \(iterative, merit\)/);
    expect(() => defineStudy({ ...minimal, reference: "dynamic_rag" })).toThrow(/"dynamic_rag" is compared but not in methods/);
    expect(() => defineStudy({ ...minimal, comparisons: [["merit", "merit"]] })).toThrow(/compares a method with itself/);
    expect(() => defineStudy({ ...minimal, subset: { rule: "initially_failed", initially_correct: 1 } })).toThrow(/subset chooses which `queries` a stream keeps, but queries is null/);
    expect(() => defineStudy({ ...minimal, initial: { bird: "x.sql" } })).toThrow(/initial names "bird", which is not in datasets \(spider\)/);
  });

  it("checks method and dataset names against the registries once plugins are loaded", () => {
    expect(() => checkStudyNames(defineStudy({ ...minimal, methods: ["iterative", "mreit"], reference: "iterative" }))).toThrow(/merit/);
    expect(() => checkStudyNames(defineStudy({ ...minimal, datasets: ["sipder"] }))).toThrow(/unknown dataset "sipder"; registered: spider, bird/);
  });

  it("says which queries a stream keeps", () => {
    expect(subsetText(defineStudy(minimal))).toBe("every query of the dataset");
    expect(subsetText(defineStudy({ ...minimal, queries: 6, subset: { rule: "initially_failed", initially_correct: 1 } }))).toBe("6 queries: up to 5 initially failed + 1 initially correct (subset rule initially_failed)");
    expect(subsetText(defineStudy({ ...minimal, queries: 6 }))).toBe("the first 6 queries of the seed-0 stream");
  });
});

describe("studyConfig", () => {
  const paths = studyPaths(defineStudy(minimal));
  it("puts runs, caches and the report under runs/studies/NAME and results/studies/NAME", () => {
    expect(paths).toEqual({ runs: join("runs", "studies", "s1"), results: join("results", "studies", "s1") });
    const c = studyConfig(defineStudy({ ...minimal, max_repair_steps: 3, queries: 10, subset: { rule: "initially_failed", initially_correct: 2 } }), "spider", paths);
    expect(c).toMatchObject({ dataset: "spider", data_dir: join("data", "spider"), initial_cache: join(paths.runs, "initial", "spider.json"), call_cache: join(paths.runs, "llm-call-cache.sqlite"), protocol: "merit", max_repair_steps: 3, subset: { rule: "initially_failed", initially_correct: 2 } });
  });
  it("tinyModels: the test fixtures on the CPU with 64 output tokens, as the quick demo", () => {
    const c = studyConfig(defineStudy({ ...minimal, models: tinyModels() }), "spider", paths);
    expect(c.model).toMatchObject({ backend: "llama", path: TINY_CHAT, gpu: false });
    expect(c.embedder).toMatchObject({ backend: "llama", path: TINY_EMBEDDER });
    expect(c.decoding.max_output_tokens).toBe(64);
  });
  it("realModels: the GGUFs of models/ with the paper's decoding", () => {
    const c = studyConfig(defineStudy({ ...minimal, models: realModels() }), "spider", paths);
    expect(c.model).toMatchObject({ backend: "llama", path: "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", gpu: "auto" });
    expect(c.embedder.path).toBe("models/bge-large-en-v1.5-f16.gguf");
    expect(c.decoding.max_output_tokens).toBe(512);
  });
  it("simulatedModels: the simulated engine and its embedder, the parameters file named (the template's option)", () => {
    const c = studyConfig(defineStudy({ ...minimal, models: simulatedModels() }), "spider", paths);
    expect(c.model).toMatchObject({ backend: "simulated", simulation: "configs/simulated-engine.json" });
    expect(c.embedder.backend).toBe("simulated");
    expect(studyConfig(defineStudy({ ...minimal, models: simulatedModels({ parameters: "w.json" }) }), "spider", paths).model.simulation).toBe("w.json");
  });
  it("server: OpenAI-compatible chat servers, the local embedder unless embedder URLs are given", () => {
    const c = studyConfig(defineStudy({ ...minimal, models: server({ base_urls: ["http://gpu1:8000/v1"] }) }), "spider", paths);
    expect(c.model).toMatchObject({ backend: "openai", base_urls: ["http://gpu1:8000/v1"], model_name: "Qwen/Qwen2.5-7B-Instruct" });
    expect(c.embedder.backend).toBe("llama");
    const e = studyConfig(defineStudy({ ...minimal, models: server({ base_urls: ["http://gpu1:8000/v1"], embedder_urls: ["http://gpu1:8001/v1"] }) }), "spider", paths);
    expect(e.embedder).toMatchObject({ backend: "openai", base_urls: ["http://gpu1:8001/v1"] });
  });
});

describe("loadStudyFile", () => {
  it("returns the default export; refuses a missing file and a file without one", async () => {
    await expect(loadStudyFile("studies/template/study.ts")).resolves.toMatchObject({ name: "template", reference: "my_method" });
    await expect(loadStudyFile(join(tmp, "none.ts"))).rejects.toThrow(/none\.ts: does not exist/);
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    writeFileSync(join(tmp, "empty.ts"), "export const x = 1;\n");
    await expect(loadStudyFile(join(tmp, "empty.ts"))).rejects.toThrow(/has no `export default defineStudy/);
  });
});

describe("the paths a study file names", () => {
  const dir = join(tmp, "studies", "paths");
  const file = join(dir, "study.ts");
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(join(dir, "data", "preds.sql"), "SELECT 1\n");
  writeFileSync(join(dir, "plugin.ts"), "export {};\n");
  const study = defineStudy({ ...minimal, plugins: ["./plugin.ts"], initial: { spider: "data/preds.sql" } });

  it("resolves plugins and initial against the study file's folder, whatever the working folder; the bundled default stays the kit's", () => {
    expect(studyPluginFiles(study, file)).toEqual([{ file: join(dir, "plugin.ts"), label: `${file}: plugins entry "./plugin.ts"` }]);
    expect(initialPredictions(study, "spider", file)).toBe(join(dir, "data", "preds.sql"));
    expect(initialPredictions(defineStudy(minimal), "spider", file)).toBe("data/predictions/spider_dev__Deepseek-Coder-7B.sql");
    expect(() => checkStudyFiles(study, file)).not.toThrow();
  });

  it("a missing file fails with one line naming the study field and where it looked, never a flag the user did not pass", () => {
    const missing = defineStudy({ ...minimal, initial: { spider: "preds.sql" } });
    expect(() => checkStudyFiles(missing, file)).toThrow(`${file}: initial.spider "preds.sql" is not a file (${join(dir, "preds.sql")}); give the predictions file's path relative to the study file`);
    expect(() => checkStudyFiles(defineStudy({ ...minimal, plugins: ["my-method.ts"] }), file)).toThrow(`${file}: plugins entry "my-method.ts" is not a file (${join(dir, "my-method.ts")}); give the plugin's path relative to the study file`);
  });
});

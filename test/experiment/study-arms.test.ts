// Tests a study's conditions and arms (lib/experiment/study.ts; issue 29 §5): study-level conditions
// (feedback regime, noise, retrieval settings, data and prompts folders relative to the study file)
// reach every run's config; an arm is registered as a method with its method's hooks and the arm's
// args (flat overrides of its factory's args; the nested planner/ranker/writer form of earlier kits is
// still read, laid flat by `armOverrides`), its conditions reach only its own runs' config, and
// mistakes are refused in one line.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStudy } from "../../lib/experiment/study-grid.ts";
import { armConditions, armOverrides, checkStudyArms, defineStudy, registerStudyArms, studyConditions, studyConfig, studyPaths } from "../../lib/experiment/study.ts";
import { getMethod } from "../../lib/methods/index.ts";

const memoryArgs = (name: string) => (getMethod(name).record.hooks?.memory as { args: Record<string, unknown> }).args;
const base = { name: "arms-test", datasets: ["spider"], seeds: [0], queries: 4 };

describe("study conditions", () => {
  it("the study's feedback, noise, retrieval and folders reach every config; folders resolve against the study file", () => {
    const study = { ...defineStudy({ ...base, methods: ["iterative", "merit"], reference: "merit", feedback: "noisy_oracle", feedback_noise: 0.2, retrieval: { max_positive: 2 }, data: { spider: "../my-spider" }, prompts_dir: "my-prompts" }), dir: join("studies", "x") };
    const config = studyConfig(study, "spider", studyPaths(study));
    expect([config.feedback_regime, config.feedback_noise, config.retrieval.max_positive, config.retrieval.max_negative]).toEqual(["noisy_oracle", 0.2, 2, 1]);
    expect([config.data_dir, config.prompts_dir]).toEqual(["studies/my-spider", "studies/x/my-prompts"]);
    expect(studyConfig(defineStudy({ ...base, methods: ["iterative", "merit"], reference: "merit", feedback: "oracle" }), "spider", studyPaths(study)).feedback_regime).toBe("denotation_confirmed");
  });
});

describe("arms", () => {
  const study = defineStudy({
    ...base,
    name: "arms-test-2",
    methods: ["merit", "merit_judge_t", "merit_k5_t", "merit_nested_t"],
    reference: "merit",
    arms: {
      merit_judge_t: { method: "merit", feedback: "llm_judge", max_repair_steps: 3 },
      merit_k5_t: { method: "merit", args: { max_positive: 5 } },
      // the nested form of earlier kits, laid flat
      merit_nested_t: { method: "merit", args: { planner: { max_positive: 4 }, ranker: { type_bonus: 0.2 }, writer: { negative: false } } },
    },
  });

  it("are registered as methods: the method's hooks with the arm's args; the conditions go to their own runs", () => {
    registerStudyArms(study);
    registerStudyArms(study); // a study loaded twice registers once
    expect(memoryArgs("merit_k5_t").max_positive).toBe(5);
    expect(getMethod("merit_k5_t").memory?.limits.positive).toBe(5);
    expect(getMethod("merit_judge_t").record).toEqual(getMethod("merit").record);
    expect(memoryArgs("merit_nested_t")).toMatchObject({ max_positive: 4, negative: false, ranker_args: { type_bonus: 0.2 } });
    expect(getMethod("merit_judge_t").description).toMatch(/\[arm of merit: feedback_regime llm_judge, max_repair_steps 3\]$/);
    expect(armConditions(study, "merit_judge_t")).toEqual({ feedback_regime: "llm_judge", max_repair_steps: 3 });
    expect(armConditions(study, "merit")).toEqual({});
    expect(studyConditions(study)).toEqual(["feedback_regime", "max_repair_steps"]);
    const paths = studyPaths(study);
    expect([studyConfig(study, "spider", paths, "merit_judge_t").feedback_regime, studyConfig(study, "spider", paths, "merit_judge_t").max_repair_steps]).toEqual(["llm_judge", 3]);
    expect(studyConfig(study, "spider", paths, "merit_k5_t").feedback_regime).toBe("denotation_confirmed");
  });

  it("armOverrides lays the nested form of earlier kits flat and passes flat args through", () => {
    expect(armOverrides({ max_positive: 5 })).toEqual({ max_positive: 5 });
    expect(armOverrides({ planner: { max_positive: 5, layout: "combined" }, ranker: { dense_weight: 0 }, writer: { scope: "same_database" }, settings: { top_k: 2 } })).toEqual({ max_positive: 5, layout: "combined", ranker_args: { dense_weight: 0 }, scope: "same_database", top_k: 2 });
    expect(armOverrides(undefined)).toEqual({});
  });

  it("refuses an arm not in methods, an arm of an arm, an arm that changes nothing, and an arg its factory lacks", () => {
    const arm = (arms: object, methods = ["merit", "a"]) => () => defineStudy({ ...base, methods, reference: "merit", arms: arms as never });
    expect(arm({ a: { method: "merit", feedback: "dbms_only" } }, ["merit", "b"])).toThrow(/arm "a" is not in methods \(merit, b\); add it to methods to run it/);
    expect(arm({ a: { method: "b", feedback: "dbms_only" }, b: { method: "merit", feedback: "dbms_only" } }, ["merit", "a", "b"])).toThrow(/arm "a" runs "b", which is another arm/);
    expect(arm({ a: { method: "merit" } })).toThrow(/arm "a" changes nothing of "merit"/);
    const bad = defineStudy({ ...base, name: "arms-test-3", methods: ["merit", "merit_bad_t"], reference: "merit", arms: { merit_bad_t: { method: "merit", args: { max_postive: 5 } } } });
    expect(() => registerStudyArms(bad)).toThrow(/study arms-test-3: arm "merit_bad_t": .*has no arg "max_postive" \(did you mean "max_positive"\?\)/);
    const taken = defineStudy({ ...base, name: "arms-test-4", methods: ["merit", "iterative"], reference: "merit", arms: { iterative: { method: "merit", feedback: "dbms_only" } } });
    expect(() => registerStudyArms(taken)).toThrow(/arm "iterative" has the name of a registered method/);
  });
});

describe("arms that measure nothing (issue 39 #23)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "merit-arms-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const lib = pathToFileURL(join(process.cwd(), "lib", "experiment", "study.ts")).href;
  const studyFile = (name: string, arms: string, methods: string) => {
    const file = join(tmp, `${name}.ts`);
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    writeFileSync(file, `import { defineStudy } from ${JSON.stringify(lib)};\nexport default defineStudy({\n  name: ${JSON.stringify(name)},\n  methods: ${methods},\n  reference: "merit",\n  queries: 2,\n  arms: {\n${arms}\n  },\n});\n`);
    return file;
  };

  it("refuses two arms of one name in the study file (an object literal would keep the last), naming both lines", async () => {
    const file = studyFile("dup-arms", `    m_dup_t: { method: "merit", feedback: "dbms_only" },\n    m_dup_t: { method: "merit", feedback: "llm_judge" },`, `["merit", "m_dup_t"]`);
    await expect(openStudy(file)).rejects.toThrow(/dup-arms\.ts: arms names "m_dup_t" twice \(lines 8 and 9\); the second would silently replace the first/);
  });

  it("refuses identical arms, an arm whose change is the method's own value, and a noise its regime does not read", () => {
    const study = (name: string, arms: object) => defineStudy({ ...base, name, methods: ["merit", ...Object.keys(arms)], reference: "merit", arms: arms as never });
    const twins = study("arms-twins", { m_twin_a: { method: "merit", feedback: "dbms_only" }, m_twin_b: { method: "merit", feedback: "dbms_only", description: "another" } });
    registerStudyArms(twins);
    expect(() => checkStudyArms(twins)).toThrow(/^study arms-twins: arms "m_twin_a" and "m_twin_b" are the same run .*drop one$/);
    const k7 = study("arms-k7", { m_k7_t: { method: "merit", max_repair_steps: 7 } });
    registerStudyArms(k7);
    expect(() => checkStudyArms(k7)).toThrow(/^study arms-k7: arm "m_k7_t" runs exactly what "merit" runs .*list "merit" in methods instead$/);
    const dflt = study("arms-default-arg", { m_pos3_t: { method: "merit", args: { max_positive: memoryArgs("merit").max_positive } } });
    registerStudyArms(dflt);
    expect(() => checkStudyArms(dflt)).toThrow(/arm "m_pos3_t" runs exactly what "merit" runs/);
    const noise = study("arms-noise", { m_noise_t: { method: "merit", feedback_noise: 0.3 } });
    registerStudyArms(noise);
    expect(() => checkStudyArms(noise)).toThrow(/arm "m_noise_t" sets feedback_noise, which feedback regime denotation_confirmed does not read/);
    const noisy = study("arms-noisy", { m_noisy_t: { method: "merit", feedback: "noisy_oracle", feedback_noise: 0.3 } });
    registerStudyArms(noisy);
    expect(() => checkStudyArms(noisy)).not.toThrow();
  });

  it("refuses an arm naming an unknown feedback regime when the study is opened, before any grid (plan and run open it first)", async () => {
    const file = studyFile("bad-regime", `    m_typo_t: { method: "merit", feedback: "dbms_onyl" },`, `["merit", "m_typo_t"]`);
    await expect(openStudy(file)).rejects.toThrow(/^study bad-regime: arm "m_typo_t": unknown feedback regime "dbms_onyl"\. Did you mean "dbms_only"\?/);
  });
});

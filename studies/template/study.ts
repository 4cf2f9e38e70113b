/**
 * A follow-up study (README "Write a follow-up study"): `merit study plan studies/template/study.ts`
 * prints what it will run and what it can detect, `merit study run studies/template/study.ts` runs it
 * (initial caches, the grid, the causal audit, the report in results/studies/template). Edit freely:
 * every field is checked by lib/experiment/study.ts.
 */
import { defineStudy, tinyModels } from "../../lib/experiment/study.ts";

export default defineStudy({
  name: "template",
  datasets: ["spider"],
  // the paper's baselines and the study's own method, registered by ./my-method.ts
  methods: ["iterative", "merit", "my_method"],
  seeds: [0], // the paper's stream orders are [0, 1, 2]; orders: [0, 1, 2, "by_database"] adds a structured order (docs/guides/studies.md)
  // Table 2 compares the reference with each other method (Δ = EX(reference) − EX(other));
  // or list the pairs yourself: comparisons: [["my_method", "merit"]],
  reference: "my_method",
  // 6 queries of Spider dev, mostly initially failed ones (the real study: queries: null, all of them)
  queries: 6,
  subset: { rule: "initially_failed", initially_correct: 1 },
  // the tiny random test models: runs from a fresh clone, numbers meaningless. For real numbers
  // (import realModels or server beside defineStudy):
  // (real models score Spider on the test-suite databases, the paper's protocol: make data-spider, or databases: "single")
  //   models: realModels(),                                     // the GGUFs of models/ (make models)
  //   models: server({ base_urls: ["http://gpu1:8000/v1"] }),   // OpenAI-compatible servers
  // or, to see the whole study on a world whose effects are known (import simulatedModels):
  //   models: simulatedModels(),                                // the simulated engine: planted effects
  //                                                             // (configs/simulated-engine.json), no model file;
  //                                                             // Spider on test-suite databases as above
  models: tinyModels(),
  plugins: ["./my-method.ts"],
});

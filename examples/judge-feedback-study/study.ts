/**
 * Example study (issue 29 §6): MERIT under three feedback regimes — the oracle's verdict (the
 * paper), only whether the SQL executed (`dbms_only`), and the frozen model judging its own attempts
 * (`llm_judge`, lib/methods/feedback.ts) — as three arms of one study: the same method, the same
 * queries, stream orders and initial cache, only the feedback differs. `merit study run` runs the
 * three grids, audits them, and reports Tables 1–3 with the arms paired (the report is told that they
 * differ in `feedback_regime` and nothing else) and the feedback-confusion table: how often each
 * regime told the agent "correct" when the oracle says wrong, and the reverse, along the stream.
 *
 * Run: `npx merit study plan examples/judge-feedback-study/study.ts`, then
 * `npx merit study run examples/judge-feedback-study/study.ts` (report in results/studies/judge-feedback).
 * Test: `npx vitest run examples/judge-feedback-study/study.test.ts`.
 *
 * Smoke scale as written: the tiny random test models (a random model never answers the judge's
 * question, so every judged attempt is rejected), 4 queries, K = 2. For real numbers: models:
 * realModels() (or server({...})), queries: null, max_repair_steps: 7, seeds: [0, 1, 2].
 */
import { defineStudy, tinyModels } from "../../lib/experiment/study.ts";

export default defineStudy({
  name: "judge-feedback",
  datasets: ["spider"],
  methods: ["merit", "merit_dbms_only", "merit_judge"],
  arms: {
    merit_dbms_only: { method: "merit", feedback: "dbms_only" },
    merit_judge: { method: "merit", feedback: "llm_judge" },
  },
  seeds: [0],
  reference: "merit",
  queries: 4,
  subset: { rule: "initially_failed", initially_correct: 1 },
  max_repair_steps: 2,
  models: tinyModels(),
});

// Test helper (not a suite): builds schema-valid synthetic trajectories (lib/repair/trajectory.ts) with fixed token counts.
import type { AttemptStatus } from "../../lib/oracle/types.ts";
import { tokenAccounting } from "../../lib/repair/trajectory-record.ts";
import { TrajectorySchema, type CallKind, type ErrorType, type Trajectory } from "../../lib/repair/trajectory.ts";

/** Token counts every synthetic call gets: initial call 100 prompt / 10 output, later calls 200 / 20. */
export const INITIAL_PROMPT = 100;
export const INITIAL_OUTPUT = 10;
export const LATER_PROMPT = 200;
export const LATER_OUTPUT = 20;

export interface TrajectorySpec {
  query_id: string;
  attempts: string[];
  statuses: AttemptStatus[];
  /** Error type per attempt; defaults: EXECUTION_ERROR → Syntax, TIMEOUT → Execution, DENOTATION_MISMATCH → Result Mismatch. */
  error_types?: (ErrorType | null)[];
  method?: string;
  dataset?: string;
  stream_seed?: number;
  /** Reflexion call pattern: a reflection after the initial failure and after every failed repair. */
  reflect?: boolean;
  /** Index of an LLM call (0 = initial) whose prompt was left-truncated by 50 tokens. */
  truncatedCall?: number;
}

const DEFAULT_TYPE: Record<AttemptStatus, ErrorType | null> = {
  CORRECT: null,
  EXECUTION_ERROR: "Syntax",
  TIMEOUT: "Execution",
  DENOTATION_MISMATCH: "Result Mismatch",
};

/** A trajectory validated by TrajectorySchema; db_executions = 1 per attempt, no retrieval. */
export function buildTrajectory(spec: TrajectorySpec): Trajectory {
  const n = spec.attempts.length;
  const calls: CallKind[] = ["initial_cache"];
  for (let i = 1; i < n; i++) {
    if (spec.reflect) calls.push("reflection");
    calls.push("repair");
  }
  if (spec.reflect && spec.statuses[n - 1] !== "CORRECT") calls.push("reflection");
  const prompt = calls.map((_, i) => (i === 0 ? INITIAL_PROMPT : LATER_PROMPT));
  const output = calls.map((_, i) => (i === 0 ? INITIAL_OUTPUT : LATER_OUTPUT));
  const truncated = calls.map((_, i) => (i === spec.truncatedCall ? 50 : 0));
  const record = {
    query_id: spec.query_id,
    db_id: "db",
    source_index: Number.parseInt(spec.query_id.replace(/\D/g, "") || "0", 10),
    stream_position: 0,
    dataset: spec.dataset ?? "spider",
    method: spec.method ?? "iterative",
    stream_seed: spec.stream_seed ?? 0,
    feedback_regime: "denotation_confirmed",
    attempts: spec.attempts,
    statuses: spec.statuses,
    db_errors: spec.statuses.map((s) => (s === "EXECUTION_ERROR" ? "near \"x\": syntax error" : s === "TIMEOUT" ? "TIMEOUT" : null)),
    error_types: spec.error_types ?? spec.statuses.map((s) => DEFAULT_TYPE[s]),
    initial_correct: spec.statuses[0] === "CORRECT",
    final_correct: spec.statuses[n - 1] === "CORRECT",
    repair_steps: n - 1,
    prompt_tokens: prompt,
    output_tokens: output,
    call_kinds: calls,
    initial_tokens_known: true,
    truncated_prompt_tokens: truncated,
    accounting: {
      ...tokenAccounting(prompt, output),
      llm_calls: calls.length,
      db_executions: n,
      embedding_calls: 0,
      retrieval_calls: 0,
      truncations: spec.truncatedCall === undefined ? 0 : 1,
    },
    reflections: calls.filter((k) => k === "reflection").map((_, i) => `reflection ${i + 1}`),
    retrieved_entry_ids: Array.from({ length: n - 1 }, () => []),
  };
  return TrajectorySchema.parse(record);
}

/**
 * A failed-then-repaired or never-repaired trajectory of `steps` repairs, with distinct SQL per
 * attempt. `repaired` makes the last attempt CORRECT.
 */
export function repairTrajectory(query_id: string, steps: number, repaired: boolean, extra: Partial<TrajectorySpec> = {}): Trajectory {
  const attempts = Array.from({ length: steps + 1 }, (_, i) => `SELECT c${i} FROM t${query_id}`);
  const statuses: AttemptStatus[] = attempts.map((_, i) => (i === steps && repaired ? "CORRECT" : "DENOTATION_MISMATCH"));
  return buildTrajectory({ query_id, attempts, statuses, ...extra });
}

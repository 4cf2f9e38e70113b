/**
 * Experiment runs, the roles of the methods a plan lists (the plan's role column; `make reproduce`):
 * the paper's (REPRODUCE_METHODS, what the paper's tables read), the controls no table reads, the
 * peers (a method that declares a citation, METHOD.md §13), and a study's own methods.
 * @module
 */
import { isMethodName, methodDefinition, type MethodSpec } from "../methods/index.ts";

/**
 * Methods no table of the paper reads (Tables 1–5, lib/analysis/paper-layout.ts and
 * data/paper-numbers.json): the non-causal control and `zeroshot` (no repair call; the initial EX is
 * the shared initial cache's). `make reproduce` runs them only with CONTROLS=1.
 */
export const CONTROL_METHODS: readonly string[] = ["zeroshot", "transductive_batch"];

/**
 * The peer memory methods (METHOD.md §13, lib/methods/peers/: every registered method that declares a
 * citation), which `make reproduce PEERS=1` adds to the grid (Makefile PEER_METHODS) for the peers
 * table and the budget-matched figure of `merit report` (lib/analysis/table-peers.ts).
 */
export const PEER_METHODS: readonly string[] = ["reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory"];

/** Who reads a method's runs (the plan's role column). */
export type MethodRole = "paper" | "control" | "peer" | "study";

/** The role of `method`: one of the paper's (REPRODUCE_METHODS), a control, a peer (declares a citation), else a study's own. */
export function methodRole(method: MethodSpec): MethodRole {
  if (CONTROL_METHODS.includes(method.canonicalName)) return "control";
  if (REPRODUCE_METHODS.includes(method.canonicalName)) return "paper";
  if (isMethodName(method.canonicalName) && methodDefinition(method.canonicalName).citation !== undefined) return "peer";
  return "study";
}

/** The role column's words. */
export const ROLE_TEXT: Record<MethodRole, string> = { paper: "paper", control: "control (no paper table reads it)", peer: "peer (METHOD.md §13)", study: "study (beyond the paper)" };

/**
 * The methods `make reproduce` runs for Tables 1–5 (Makefile PAPER_METHODS; CONTROL_METHODS join
 * them with CONTROLS=1).
 */
export const REPRODUCE_METHODS: readonly string[] = ["iterative", "reflexion", "dynamic_rag", "merit", "merit_typerel", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only"];


/**
 * Deterministic failure classifier (METHOD.md §3): maps an attempt's outcome to a coarse error type
 * by ordered, case-insensitive rules over the DBMS message; executed wrong answers are all
 * `Result Mismatch`. Pure: no SQL analysis, no I/O.
 * @module
 */
import type { Status } from "./oracle/types.ts";

/** The coarse error types the classifier produces (METHOD.md §3), in their code order, spelled as written to disk. */
export const ERROR_TYPES = ["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/** Subtypes (logged only; retrieval and memory use `errorType`). */
export type ErrorSubtype =
  | "Timeout"
  | "Missing Table"
  | "Missing Column"
  | "Missing View"
  | "Ambiguous Column"
  | "Unknown Function"
  | "Parse Failure"
  | "DBMS Aggregate Misuse"
  | "Type Mismatch"
  | "Read Only Violation"
  | "DB Not Found"
  | "Unknown";

/** Where a classification came from: the DBMS message, the bare fact of a wrong answer, or nothing. */
export type ClassificationSource = "dbms" | "semantic_hypothesis" | "none";

/** One classification record (METHOD.md §3; on disk as error_type, error_subtype, evidence, source). */
export interface Classification {
  errorType: ErrorType;
  errorSubtype: ErrorSubtype;
  /** The DBMS message verbatim (source `dbms`) or a fixed sentence. */
  evidence: string;
  source: ClassificationSource;
}

/** The part of an attempt's outcome the classifier reads. */
export interface ClassifierInput {
  status: Status;
  /** Raw DBMS message, `TIMEOUT`, or the kit's own message; null/empty when none. */
  dbError: string | null;
  /** Whether the prediction executed; when omitted it is inferred from the status (CORRECT or DENOTATION_MISMATCH). */
  predictedExecOk?: boolean;
}

/**
 * Types with a hard type filter in the type-reliability-aware method (METHOD.md §3, §5.6; the
 * reference calls it HIGH_PRECISION_RETRIEVAL_TYPES). Aggregation and Filter/Value are DBMS-derived
 * too but deliberately not in the set.
 */
export const HIGH_RELIABILITY_TYPES: ReadonlySet<ErrorType> = new Set<ErrorType>(["Syntax", "Schema Linking", "Execution"]);

/** Evidence sentence for an executed wrong answer (source `semantic_hypothesis`). */
export const RESULT_MISMATCH_EVIDENCE = "The query executed but its result differs from the gold denotation.";
/** Evidence sentence when there is neither a DBMS message nor an executed mismatch (source `none`). */
export const NO_EVIDENCE = "No DBMS error and no executed result mismatch to classify.";

/**
 * The ordered DBMS rules of METHOD.md §3 step 1b; the first match wins. Every pattern is a
 * case-insensitive search. `\b` appears exactly where the spec says "word-boundary"/"word-bounded"
 * (rules 1, 6 and 10); the other rules are plain substring searches.
 */
const DBMS_RULES: readonly { pattern: RegExp; errorType: ErrorType; errorSubtype: ErrorSubtype }[] = [
  { pattern: /\bno such table:/i, errorType: "Schema Linking", errorSubtype: "Missing Table" },
  { pattern: /no such column:/i, errorType: "Schema Linking", errorSubtype: "Missing Column" },
  { pattern: /no such view:/i, errorType: "Schema Linking", errorSubtype: "Missing View" },
  { pattern: /ambiguous column name:/i, errorType: "Schema Linking", errorSubtype: "Ambiguous Column" },
  { pattern: /no such function:/i, errorType: "Syntax", errorSubtype: "Unknown Function" },
  { pattern: /\b(?:syntax error|incomplete input|unrecognized token)\b/i, errorType: "Syntax", errorSubtype: "Parse Failure" },
  { pattern: /misuse of aggregate|aggregate functions are not allowed/i, errorType: "Aggregation", errorSubtype: "DBMS Aggregate Misuse" },
  { pattern: /datatype mismatch|type mismatch/i, errorType: "Filter/Value", errorSubtype: "Type Mismatch" },
  { pattern: /attempt to write a readonly database|only SELECT or WITH queries/i, errorType: "Execution", errorSubtype: "Read Only Violation" },
  { pattern: /\bdatabase not found\b/i, errorType: "Execution", errorSubtype: "DB Not Found" },
];

/**
 * Classifies a failed attempt (METHOD.md §3). Returns null for CORRECT (the classifier is not
 * called on successes). Decision order: a non-empty DBMS message decides alone (timeout, then the
 * ten ordered rules, then Unknown); otherwise an executed DENOTATION_MISMATCH is Result Mismatch;
 * otherwise Unknown with source `none`.
 * @example classifyFailure({status: "EXECUTION_ERROR", dbError: "no such column: nme"})
 *   // → {errorType: "Schema Linking", errorSubtype: "Missing Column", evidence: "no such column: nme", source: "dbms"}
 */
export function classifyFailure(outcome: ClassifierInput): Classification | null {
  if (outcome.status === "CORRECT") return null;
  const message = outcome.dbError ?? "";
  if (message.length > 0) return classifyDbmsMessage(message);
  const executed = outcome.predictedExecOk ?? outcome.status === "DENOTATION_MISMATCH";
  if (executed && outcome.status === "DENOTATION_MISMATCH") {
    return { errorType: "Result Mismatch", errorSubtype: "Unknown", evidence: RESULT_MISMATCH_EVIDENCE, source: "semantic_hypothesis" };
  }
  return { errorType: "Unknown", errorSubtype: "Unknown", evidence: NO_EVIDENCE, source: "none" };
}

/** METHOD.md §3 step 1 for a non-empty DBMS message; the evidence is the message verbatim. */
export function classifyDbmsMessage(message: string): Classification {
  // Step 1a: the literal TIMEOUT (trimmed, any case) or "timed out" anywhere (any case).
  if (message.trim().toUpperCase() === "TIMEOUT" || /timed out/i.test(message)) {
    return { errorType: "Execution", errorSubtype: "Timeout", evidence: message, source: "dbms" };
  }
  for (const rule of DBMS_RULES) {
    if (rule.pattern.test(message)) {
      return { errorType: rule.errorType, errorSubtype: rule.errorSubtype, evidence: message, source: "dbms" };
    }
  }
  return { errorType: "Unknown", errorSubtype: "Unknown", evidence: message, source: "dbms" };
}

// Tests lib/memory/finalize.ts: every case of METHOD.md §4.3 (at most one entry per episode), episode ids and failure contexts.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { OBSERVATION_FIELDS } from "../../lib/memory/entry.ts";
import {
  episodeId,
  EpisodeShapeError,
  failureContext,
  finalizeEpisode,
  transductivePrepassEntry,
  type EpisodeAttempt,
  type FinishedEpisode,
  type MemoryWriteFlags,
} from "../../lib/memory/finalize.ts";
import { entryId } from "../../lib/memory/identity.ts";

const MERIT: MemoryWriteFlags = { updatesGlobalMemory: true, writesPositive: true, writesNegative: true, scope: "global" };
const POSITIVE_ONLY: MemoryWriteFlags = { ...MERIT, writesNegative: false };
const MEMORYLESS: MemoryWriteFlags = { ...MERIT, updatesGlobalMemory: false };

const correct = (sql: string): EpisodeAttempt => ({ sql, status: "CORRECT", predictedExecOk: true, dbError: null, acceptance: "correct", errorType: null });
const mismatch = (sql: string, errorType: string | null = "Result Mismatch"): EpisodeAttempt => ({
  sql,
  status: "DENOTATION_MISMATCH",
  predictedExecOk: true,
  dbError: null,
  acceptance: "rejected",
  errorType,
});
const execError = (sql: string, dbError: string, errorType: string | null = "Schema Linking"): EpisodeAttempt => ({
  sql,
  status: "EXECUTION_ERROR",
  predictedExecOk: false,
  dbError,
  acceptance: "rejected",
  errorType,
});

function episode(attempts: EpisodeAttempt[], over: Partial<FinishedEpisode> = {}): FinishedEpisode {
  return {
    dataset: "spider",
    method: "merit",
    streamOrderSeed: 0,
    streamPosition: 5,
    queryId: "17",
    dbId: "concert_singer",
    question: "How many singers?",
    schema: "Database: concert_singer",
    feedbackRegime: "denotation_confirmed",
    attempts,
    retrievedEntryIds: ["e1", "e2"],
    ...over,
  };
}

describe("episodeId", () => {
  it("is content_hash of [dataset, method, seed, position, query_id]", () => {
    const json = '["spider","merit",0,5,"17"]'; // canonical JSON of the list, written by hand
    expect(episodeId("spider", "merit", 0, 5, "17")).toBe(createHash("sha256").update(json).digest("hex"));
  });
});

describe("failureContext", () => {
  it("formats sql, status and db_error, (none) for null or empty", () => {
    expect(failureContext({ sql: "SELECT x", status: "EXECUTION_ERROR", dbError: "no such column: x" })).toBe(
      "attempted_sql=SELECT x; status=EXECUTION_ERROR; db_error=no such column: x",
    );
    expect(failureContext({ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null })).toBe("attempted_sql=SELECT 1; status=DENOTATION_MISMATCH; db_error=(none)");
    expect(failureContext({ sql: "", status: "DENOTATION_MISMATCH", dbError: "" })).toBe("attempted_sql=; status=DENOTATION_MISMATCH; db_error=(none)");
  });
});

describe("finalizeEpisode (METHOD.md §4.3)", () => {
  it("memoryless methods store nothing", () => {
    expect(finalizeEpisode(episode([execError("S0", "no such column: a"), mismatch("S1")]), MEMORYLESS)).toBeNull();
  });

  it("stores nothing when the initial SQL was already correct (n = 0)", () => {
    expect(finalizeEpisode(episode([correct("SELECT 1")]), MERIT)).toBeNull();
  });

  it("repaired episode → one POSITIVE for the LAST transition only", () => {
    const e = finalizeEpisode(
      episode([execError("SELECT nme FROM singer", "no such column: nme"), mismatch(" SELECT name FROM singer "), correct("SELECT count(*) FROM singer")]),
      MERIT,
    );
    expect(e).not.toBeNull();
    const entry = e!;
    expect(entry.polarity).toBe("positive");
    // type = classification of attempt n−1 = attempt 1 (a mismatch), not of attempt 0
    expect(entry.error_type).toBe("Result Mismatch");
    expect(entry.attempted_sql_delta).toBe("SELECT name FROM singer => SELECT count(*) FROM singer");
    expect(entry.failure_context).toBe("attempted_sql= SELECT name FROM singer ; status=DENOTATION_MISMATCH; db_error=(none)");
    expect(entry.successful_direction).toBe("Observed successful transition: SELECT name FROM singer => SELECT count(*) FROM singer");
    expect(entry.observed_outcome).toBe("CORRECT");
    expect(entry.observed_db_error).toBeNull();
    expect(entry.source_iteration).toBe(2);
    expect([entry.confirmation_count, entry.success_count, entry.failure_count]).toEqual([1, 1, 0]);
    expect(entry.entry_id).toBe(entryId("Result Mismatch", "SELECT name FROM singer => SELECT count(*) FROM singer"));
    expect(entry.source_episode_id).toBe(episodeId("spider", "merit", 0, 5, "17"));
    expect(entry.provenance).toEqual({ method_name: "merit", feedback_regime: "denotation_confirmed", retrieved_entry_ids: ["e1", "e2"] });
    expect(entry.applicability_scope).toBe("global");
    expect([entry.source_query_id, entry.source_db_id, entry.source_stream_position]).toEqual(["17", "concert_singer", 5]);
  });

  it("positive after one repair takes the type of the initial failure", () => {
    const entry = finalizeEpisode(episode([execError("SELECT nme FROM singer", "no such column: nme"), correct("SELECT name FROM singer")]), MERIT)!;
    expect(entry.error_type).toBe("Schema Linking");
    expect(entry.failure_context).toBe("attempted_sql=SELECT nme FROM singer; status=EXECUTION_ERROR; db_error=no such column: nme");
    expect(entry.source_iteration).toBe(1);
  });

  it("a null classification is stored as Result Mismatch", () => {
    expect(finalizeEpisode(episode([mismatch("A", null), correct("B")]), MERIT)!.error_type).toBe("Result Mismatch");
    expect(finalizeEpisode(episode([mismatch("A"), mismatch("B", null)]), MERIT)!.error_type).toBe("Result Mismatch");
  });

  it("unsuccessful episode → one NEGATIVE from the final attempt", () => {
    const attempts = [mismatch("S0"), mismatch("S1"), execError("S2", "near \"FROM\": syntax error", "Syntax")];
    const entry = finalizeEpisode(episode(attempts), MERIT)!;
    expect(entry.polarity).toBe("negative");
    expect(entry.error_type).toBe("Syntax");
    expect(entry.attempted_sql_delta).toBe("S1 => S2");
    expect(entry.failure_context).toBe('attempted_sql=S2; status=EXECUTION_ERROR; db_error=near "FROM": syntax error');
    expect(entry.observed_outcome).toBe("EXECUTION_ERROR");
    expect(entry.observed_db_error).toBe('near "FROM": syntax error');
    expect(entry.successful_direction).toBe("");
    expect(entry.source_iteration).toBe(2);
    expect([entry.confirmation_count, entry.success_count, entry.failure_count]).toEqual([1, 0, 1]);
  });

  it("unrepaired initial failure with K = 0 → negative 'initial SQL => …', iteration 0", () => {
    const entry = finalizeEpisode(episode([execError("SELECT x", "no such column: x")]), MERIT)!;
    expect(entry.attempted_sql_delta).toBe("initial SQL => SELECT x");
    expect(entry.source_iteration).toBe(0);
    expect(entry.error_type).toBe("Schema Linking");
  });

  it("positive_only and dynamic_rag store no negatives but do store positives", () => {
    expect(finalizeEpisode(episode([mismatch("A"), mismatch("B")]), POSITIVE_ONLY)).toBeNull();
    expect(finalizeEpisode(episode([mismatch("A"), correct("B")]), POSITIVE_ONLY)!.polarity).toBe("positive");
  });

  it("dbms_only: no entry when the final attempt executed, a negative when it failed", () => {
    const executedUnknown: EpisodeAttempt = { sql: "B", status: "DENOTATION_MISMATCH", predictedExecOk: true, dbError: null, acceptance: "unconfirmed", errorType: "Result Mismatch" };
    expect(finalizeEpisode(episode([execError("A", "no such table: x"), executedUnknown], { feedbackRegime: "dbms_only" }), MERIT)).toBeNull();
    const failed = finalizeEpisode(episode([execError("A", "no such table: x"), execError("B", "no such table: y")], { feedbackRegime: "dbms_only" }), MERIT)!;
    expect(failed.polarity).toBe("negative");
    expect(failed.provenance.feedback_regime).toBe("dbms_only");
  });

  it("writes the policy's scope", () => {
    expect(finalizeEpisode(episode([mismatch("A"), mismatch("B")]), { ...MERIT, scope: "cross_database" })!.applicability_scope).toBe("cross_database");
  });

  it("history holds one observation with exactly the 14 observation fields of the entry", () => {
    const entry = finalizeEpisode(episode([mismatch("A"), correct("B")]), MERIT)!;
    expect(entry.provenance_history).toHaveLength(1);
    const record = entry.provenance_history[0];
    expect(Object.keys(record).sort()).toEqual([...OBSERVATION_FIELDS].sort());
    expect(OBSERVATION_FIELDS).toHaveLength(14);
    for (const field of OBSERVATION_FIELDS) expect(record[field]).toEqual(entry[field]);
  });

  it("rejects an episode without attempts", () => {
    expect(() => finalizeEpisode(episode([]), MERIT)).toThrow(EpisodeShapeError);
  });

  it("transductive pre-pass: a negative 'initial SQL => …' at iteration 0 with its own episode id", () => {
    const ep = episode([execError("SELECT x", "no such column: x"), correct("SELECT y")]);
    const pre = transductivePrepassEntry(ep, MERIT)!;
    expect(pre.polarity).toBe("negative");
    expect(pre.attempted_sql_delta).toBe("initial SQL => SELECT x");
    expect(pre.source_iteration).toBe(0);
    expect(pre.provenance.retrieved_entry_ids).toEqual([]);
    const json = '["spider","merit",0,5,"17","transductive_prepass"]';
    expect(pre.source_episode_id).toBe(createHash("sha256").update(json).digest("hex"));
    expect(pre.provenance_history[0].source_episode_id).toBe(pre.source_episode_id);
    expect(pre.source_episode_id).not.toBe(finalizeEpisode(ep, MERIT)!.source_episode_id);
    expect(transductivePrepassEntry(episode([correct("SELECT 1")]), MERIT)).toBeNull();
  });
});

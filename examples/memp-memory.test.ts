// Tests examples/memp-memory.ts, a memory that revises itself (issue 36 §6), on real Spider data and
// the scripted five-query scenario (test/helpers/scripted-scenario.ts: 426 correct, A fails and is
// repaired at step 3, B is never repaired, C is repaired at step 1, 278 correct). B follows the two
// procedures of 426 and A and fails: its write supersedes both with cautioned revisions, recorded as
// `memory_retires`; C then sees only the revisions. A run stopped while C is being repaired resumes
// to the same bytes as an uninterrupted one (the revision is replayed from the trajectories); the
// audit is clean and flags a forged revision; the memory size counts the notes in force.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryGrowth } from "../lib/analysis/memory-growth.ts";
import { readRunDiagnostics, runMemorySize } from "../lib/analysis/memory-diagnostics.ts";
import { auditRun } from "../lib/experiment/audit.ts";
import { auditRevisions } from "../lib/experiment/audit-revisions.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../lib/llm/types.ts";
import { loadPlugins, stampNotes } from "../lib/methods/index.ts";
import { markSourceNote } from "../lib/methods/hooks.ts";
import { noteView } from "../lib/methods/note-memory.ts";
import { readRun } from "../test/helpers/run-fixture.ts";
import { ScriptedBackend } from "../test/helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, scenarioScript, SCENARIO_IDS, SCENARIO_LIMIT, type ScenarioFixture } from "../test/helpers/scripted-scenario.ts";
import { budget } from "../test/helpers/budget.ts";
import { MAX_FAILURES, procedureText, writeProcedures } from "./memp-memory.ts";

const PLUGIN = "examples/memp-memory.ts";

/** The scenario's repairs, failing with "scripted stop" at the `stopAt`-th call. */
function repairs(fx: ScenarioFixture, stopAt = Infinity): ChatBackend {
  const script = new ScriptedBackend(scenarioScript(fx.dataset));
  let n = 0;
  return {
    identity: script.identity,
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      if (++n >= stopAt) throw new Error("scripted stop");
      return script.generate(request);
    },
    close: async () => {},
  };
}

let fx: ScenarioFixture;
beforeAll(async () => {
  await loadPlugins([PLUGIN]);
  fx = await openScenario("memp-memory");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("memp_memory, a memory that revises itself", () => {
  it("a failed episode supersedes the procedures it followed; later episodes see only the revisions", async () => {
    const dir = join(fx.root, "whole");
    await runScenarioWith(fx, "memp_memory", dir, repairs(fx));
    const { trajectories, retrievals, prompts } = readRun(dir);
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    const byId = new Map(trajectories.map((t) => [t.query_id, t]));
    const first = [...byId.get("426")!.memory_writes!, ...byId.get(A)!.memory_writes!].map((n) => n.note_id);
    expect(first).toHaveLength(2);
    // B (never repaired) followed both and revises both: two new notes, each superseding one.
    const b = byId.get(B)!;
    expect(b.memory_retires).toEqual(first);
    expect(b.memory_writes!.map((n) => n.supersedes)).toEqual([[first[0]], [first[1]]]);
    expect(b.memory_writes!.every((n) => n.text.includes("Caution: an episode that followed it still failed (1 time)"))).toBe(true);
    // C (position 3) is shown the revisions only, never the superseded notes.
    const cPicks = retrievals.filter((r) => r.query_id === C).flatMap((r) => r.retrieved_entry_ids);
    expect(new Set(cPicks)).toEqual(new Set(b.memory_writes!.map((n) => n.note_id)));
    expect(prompts.find((p) => p.query_id === C && p.kind === "repair")!.prompt).toContain("PROCEDURES FROM EARLIER EPISODES:\n[procedure 1]");
    // Episodes without a revision keep the trajectory's shape (no memory_retires).
    expect(trajectories.filter((t) => t.memory_retires !== undefined).map((t) => t.query_id)).toEqual([B]);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
    // The memory size counts the notes in force: after B (3 episodes) the 2 revisions, not 4 notes.
    const sizes = memoryGrowth([runMemorySize(readRunDiagnostics(dir)!)]).filter((p) => p.polarity === "positive").map((p) => [p.episodes, p.entries]);
    expect(sizes).toEqual([[0, 0], [1, 1], [2, 2], [3, 2], [4, 3], [5, 4]]);
  }, budget(120_000));

  it("a run stopped after the revision resumes to the same bytes as an uninterrupted one", async () => {
    const whole = join(fx.root, "whole"); // written by the test above
    const stopped = join(fx.root, "stopped");
    // Calls: A's 3 repairs, B's 7, then C's first: stopped there, after B's revision is committed.
    await expect(runScenarioWith(fx, "memp_memory", stopped, repairs(fx, 11))).rejects.toThrow(/scripted stop/);
    expect(readRun(stopped).trajectories.map((t) => t.query_id)).toEqual(["426", A, B]);
    await runScenarioWith(fx, "memp_memory", stopped, repairs(fx), { resume: true });
    expect(readRun(stopped).trajectories).toHaveLength(SCENARIO_LIMIT);
    for (const file of ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json"]) {
      expect(readFileSync(join(stopped, file), "utf8"), file).toBe(readFileSync(join(whole, file), "utf8"));
    }
  }, budget(120_000));

  it("merit audit flags a revision of a note the episode could not see, and a retrieval of a retired note", () => {
    const { trajectories, retrievals } = readRun(join(fx.root, "whole"));
    const forged = trajectories.map((t) => ({ ...t }));
    const bIndex = forged.findIndex((t) => t.query_id === B);
    const cNote = forged.find((t) => t.query_id === C)!.memory_writes![0].note_id;
    forged[bIndex] = { ...forged[bIndex], memory_retires: [...forged[bIndex].memory_retires!, cNote] };
    const found = auditRevisions(forged, retrievals);
    expect(found.map((v) => [v.kind, v.queryId, v.detail])).toEqual([["revision", B, `retires note ${cNote}, which no earlier episode wrote`]]);
    // A retrieval at C of a note B retired.
    const retired = trajectories.find((t) => t.query_id === B)!.memory_retires![0];
    const cStep = retrievals.find((r) => r.query_id === C)!;
    const late = auditRevisions(trajectories, [{ ...cStep, retrieved_entry_ids: [retired] }]);
    expect(late.map((v) => v.kind)).toEqual(["retired-note"]);
  });

  it(`retires a procedure after ${MAX_FAILURES} failures, with no successor`, () => {
    const source = { queryId: "q0", dbId: "db", streamPosition: 0, episodeId: "ep0" };
    const p = { question: "How many singers?", sql: "SELECT count(*) FROM singer", failures: MAX_FAILURES - 1 };
    const memory = [noteView(stampNotes("memp_memory", source, [{ kind: "procedure", text: procedureText(p), key: p.question, polarity: "positive", data: p }])[0], null)];
    const episode = { dataset: "spider", queryId: "q1", dbId: "db", question: "How many concerts?", evidence: "", schema: "", streamPosition: 1, attempts: [{ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null, executed: true, errorType: "Result Mismatch", rowsPreview: "[1]" }], success: false, reflections: [], retrieved: [[memory[0].note_id]] };
    expect(writeProcedures(episode, memory)).toEqual({ notes: [], retire: [memory[0].note_id] });
  });

  it("never revises or retires a procedure of a source memory (config memory_source: read-only, refused by the run)", () => {
    // Issue 39 situation "memory transfer": a Spider-DK run shown the Spider run's procedures stopped
    // with "supersedes note … of the read-only source memory" at its first failed episode.
    const source = { queryId: "q0", dbId: "db", streamPosition: 0, episodeId: "ep0" };
    const fresh = { question: "How many singers?", sql: "SELECT count(*) FROM singer", failures: 0 };
    const worn = { ...fresh, question: "How many stadiums?", failures: MAX_FAILURES - 1 };
    const memory = [fresh, worn].map((p) => markSourceNote(noteView(stampNotes("memp_memory", source, [{ kind: "procedure", text: procedureText(p), key: p.question, polarity: "positive", data: p }])[0], null)));
    const episode = { dataset: "spider-dk", queryId: "q1", dbId: "db", question: "How many concerts?", evidence: "", schema: "", streamPosition: 1, attempts: [{ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null, executed: true, errorType: "Result Mismatch", rowsPreview: "[1]" }], success: false, reflections: [], retrieved: [memory.map((n) => n.note_id)] };
    expect(writeProcedures(episode, memory)).toEqual({ notes: [], retire: [] });
  });
});

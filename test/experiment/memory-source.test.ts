// A memory from another run (issue 36 §6, third bullet; lib/experiment/memory-source.ts): config
// `memory_source` names a finished run whose memory hook's notes in force join the run's memory
// read-only. On the scripted scenario: the source run covers the five queries; the target run covers
// the first two of the same stream, so the source notes about those two are never shown (they carry
// feedback on queries the run has not reached) and the other three are shown from the first repair
// on. The manifest records the source (part of the identity); `merit audit` is clean, and flags a
// source changed afterwards; a write that revises a source note, a method without a memory hook and
// a source written by another hook are refused in one line.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditRun } from "../../lib/experiment/audit.ts";
import { readMemoryEntries } from "../../lib/experiment/run-dir.ts";
import { sourceEntryId } from "../../lib/memory/sourced-store.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { getMethod, markSourceNote, registerMethod, stampNotes, stampWrite } from "../../lib/methods/index.ts";
import { noteView } from "../../lib/methods/note-memory.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { readRun, SPIDER_DIR } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, scenarioScript, SCENARIO_SEED, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

const seen: { query: string; notes: string[] }[] = [];
const spy = (name: string, hookName: string) =>
  registerMethod({
    name,
    description: "writes one note per episode, retrieves everything it is shown (test)",
    hooks: {
      memory: {
        name: hookName,
        heading: "NOTES",
        write: (episode) => [{ kind: "trace", text: `episode of ${episode.queryId}` }],
        retrieve: (request, memory) => (seen.push({ query: request.queryId, notes: memory.map((n) => n.source_query_id) }), memory.map((note) => ({ note }))),
      },
    },
  });
spy("test_source_spy", "spy");
spy("test_other_spy", "other");

const backend = (fx: ScenarioFixture): ChatBackend => new ScriptedBackend(scenarioScript(fx.dataset));

/** Runs `method` over the first `limit` queries of the scenario's stream with `memory_source`. */
function runWithSource(fx: ScenarioFixture, method: string, outDir: string, source: string, limit = 2, resume = false) {
  return runExperiment({
    spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, memory_source: source }), method, seed: SCENARIO_SEED, limit },
    method: getMethod(method),
    dataset: fx.dataset,
    initialCache: fx.cache,
    outDir,
    resume,
    services: { backend: backend(fx), oracle: fx.oracle, embedder: new HashedEmbedder(), retriever: createRetriever() },
  });
}

let fx: ScenarioFixture;
let source: string;
beforeAll(async () => {
  fx = await openScenario("memory-source");
  source = join(fx.root, "source");
  await runScenarioWith(fx, "test_source_spy", source, backend(fx));
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("config memory_source", () => {
  it("shows the source's notes from the first repair on, never those about the run's own queries, and records the source", async () => {
    const dir = join(fx.root, "target");
    seen.length = 0;
    await runWithSource(fx, "test_source_spy", dir, source);
    const { trajectories } = readRun(dir);
    expect(trajectories.map((t) => t.query_id)).toEqual(["426", A]);
    // A (position 1) is shown the source notes of B, C and 278, and the run's own note of 426.
    expect(seen.filter((s) => s.query === A).every((s) => [...s.notes].sort().join() === ["278", "426", B, C].sort().join())).toBe(true);
    expect(seen.some((s) => s.query === A)).toBe(true);
    // The trajectories store only the run's own notes.
    expect(trajectories.flatMap((t) => t.memory_writes!.map((n) => n.source_query_id))).toEqual(["426", A]);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    const sourceManifest = JSON.parse(readFileSync(join(source, "manifest.json"), "utf8"));
    expect(manifest.memory_source).toEqual({ path: source, method: "test_source_spy", dataset: "spider", trajectories_sha256: sourceManifest.trajectories_sha256, notes_in_force: 5, notes_shown: 3 });
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).config.memory_source).toBe(source);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
  }, budget(120_000));

  it("a write may not revise a source note", () => {
    const src = { queryId: "q0", dbId: "db", streamPosition: 3, episodeId: "ep" };
    const note = markSourceNote(noteView(stampNotes("m", src, [{ kind: "trace", text: "t" }])[0], null));
    const here = { ...src, queryId: "q1", streamPosition: 0, episodeId: "ep1" };
    expect(() => stampWrite("m", here, [{ kind: "trace", text: "u", supersedes: [note.note_id] }], [note])).toThrow(/^method "m": memory\.write for query q1 supersedes note "[0-9a-f]+" of the read-only source memory \(config memory_source\); a run revises only its own notes: leave out the notes for which isSourceNote\(note\) \(lib\/plugin\.ts\) is true$/);
    expect(() => stampWrite("m", here, { notes: [], retire: [note.note_id] }, [note])).toThrow(/retires note .* of the read-only source memory/);
  });

  it("refuses in one line a method without a memory hook or a source written by another hook", async () => {
    await expect(runWithSource(fx, "iterative", join(fx.root, "no-hook"), source)).rejects.toThrow(/^config memory_source .*: method iterative has no memory hook/);
    await expect(runWithSource(fx, "test_other_spy", join(fx.root, "other-hook"), source)).rejects.toThrow(/was written by memory hook "spy" \(method test_source_spy\), not "other" of method test_other_spy/);
  }, budget(120_000));

  it("MERIT's memory reads a source run's entries: shown from the first repair on, never those observed on the run's own queries, never stored in its memory files; audit clean; a second run the same bytes", async () => {
    const meritSource = join(fx.root, "merit-source");
    await runScenarioWith(fx, "merit", meritSource, backend(fx));
    const sourceEntries = readMemoryEntries(meritSource)!;
    const sourceSha = JSON.parse(readFileSync(join(meritSource, "manifest.json"), "utf8")).trajectories_sha256 as string;
    const shown = sourceEntries.filter((e) => ![e, ...e.provenance_history].some((o) => ["426", A].includes(o.source_query_id)));
    expect(shown.length, "the source stores entries of queries beyond the target's two").toBeGreaterThan(0);
    const shownIds = new Set(shown.map((e) => sourceEntryId(sourceSha, e.entry_id)));
    const hiddenIds = new Set(sourceEntries.filter((e) => !shown.includes(e)).map((e) => sourceEntryId(sourceSha, e.entry_id)));
    const dir = join(fx.root, "merit-target");
    await runWithSource(fx, "merit", dir, meritSource);
    const { retrievals } = readRun(dir);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.memory_source).toEqual({ path: meritSource, method: "merit", dataset: "spider", trajectories_sha256: sourceSha, entries_in_force: sourceEntries.length, entries_shown: shown.length });
    // retrieved at position −1 from the first retrieval on; never an entry observed on 426 or A
    const retrievedSource = retrievals.flatMap((r) => r.retrieved_entry_ids.filter((id, i) => r.source_stream_positions[i] === -1));
    expect(retrievedSource.length).toBeGreaterThan(0);
    expect(retrievedSource.every((id) => shownIds.has(id))).toBe(true);
    expect(retrievals.flatMap((r) => r.retrieved_entry_ids).some((id) => hiddenIds.has(id))).toBe(false);
    // the run's own memory files hold its own entries only
    const own = readMemoryEntries(dir) ?? [];
    expect(own.every((e) => e.source_stream_position >= 0 && !shownIds.has(e.entry_id))).toBe(true);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
    // deterministic: a second run writes the same trajectories, retrieval log and memory
    const again = join(fx.root, "merit-target-again");
    await runWithSource(fx, "merit", again, meritSource);
    for (const file of ["trajectories.jsonl", "retrieval_log.jsonl", "prompts.jsonl", "memory/memory_positive.jsonl", "memory/memory_negative.jsonl"]) {
      expect(readFileSync(join(again, file), "utf8"), file).toBe(readFileSync(join(dir, file), "utf8"));
    }
  }, budget(240_000));

  it("merit audit flags a source changed after the run used it", () => {
    appendFileSync(join(source, "trajectories.jsonl"), "\n");
    const found = auditRun(join(fx.root, "target"), fx.dataset).violations;
    expect(found.map((v) => v.kind)).toContain("memory-source");
  });
});

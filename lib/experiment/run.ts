/**
 * Experiment runs (METHOD.md §6–7, §11): one method over one stream order, episode by episode, each
 * committed before the next starts — retrieval-log and prompt lines, then the trajectory line (the
 * commit point), then what the episode wrote joins the run's memory (run-memory.ts; idempotent by
 * episode id). A killed run resumes from its last committed episode and finishes byte-identical to an
 * uninterrupted one (every file except the manifest's timestamps and stdout.log). What identifies a
 * run and what its manifest records: run-manifest.ts; the resume checks: run-resume.ts; file names
 * and formats: run-dir.ts.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { runMetrics } from "./run-metrics.ts";
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { runEpisode, type EpisodeSpec } from "../repair/episode.ts";
import { underSettings, type MethodSpec } from "../methods/index.ts";
import { TruncationLog } from "./truncation-log.ts";
import { toTrajectory } from "../repair/trajectory-record.ts";
import { TrajectorySchema, type Trajectory } from "../repair/trajectory.ts";
import { removeStaleTempFiles, writeFileAtomic } from "../atomic-file.ts";
import { JsonlJournal } from "./journal.ts";
import { acquireRunLock } from "./run-lock.ts";
import { RUN_FILES, runJsonText, type PromptRecord } from "./run-dir.ts";
import { openRunMemory } from "./run-memory.ts";
import { countTransport, memorySourceOf, priorTiming, priorTransport, runIdentity, writeManifest, type RunOptions, type RunResult, type RunSpec, type TimingRecord } from "./run-manifest.ts";
import { checkOutPath, checkResume, readJsonFile } from "./run-resume.ts";
import { buildStream, type StreamItem } from "./stream.ts";

export { manifestBody, runIdentity, type RunOptions, type RunProgress, type RunResult, type RunSpec } from "./run-manifest.ts";
export { checkResume, checkRunDir, comparableManifests, FIELD_MEANING, firstDifference, RESUMABLE_MANIFEST_FIELDS, shown } from "./run-resume.ts";

/** Runs (or resumes) one method over one stream order and writes its run directory. */
export async function runExperiment(given: RunOptions): Promise<RunResult> {
  // The config's retrieval settings are applied to the method's memory args here, so every run
  // honours them whoever built its retriever (METHOD.md §5.5–5.6, method.ts `underSettings`).
  const opts: RunOptions = { ...given, method: underSettings(given.method, given.spec.config.retrieval) };
  const { spec, method, dataset, outDir, services } = opts;
  const log = (line: string) => {
    opts.log?.(line);
    stdout.append([line]);
  };
  checkOutPath(outDir);
  const created = !existsSync(outDir);
  mkdirSync(outDir, { recursive: true });
  // Everything is checked under the lock and before the first write: a refused run changes nothing.
  let lock: ReturnType<typeof acquireRunLock>;
  try {
    lock = acquireRunLock(outDir);
  } catch (error) {
    if (created) rmdirSync(outDir);
    throw error;
  }
  const trajectories = new JsonlJournal(join(outDir, RUN_FILES.trajectories));
  const retrievalLog = new JsonlJournal(join(outDir, RUN_FILES.retrievalLog));
  const prompts = new JsonlJournal(join(outDir, RUN_FILES.prompts));
  const stdout = new JsonlJournal(join(outDir, RUN_FILES.stdout));
  try {
    return await runLocked();
  } finally {
    // Every journal line was fsynced when written: a failing close loses nothing, and the lock is
    // released whatever happened.
    for (const j of [trajectories, retrievalLog, prompts, stdout]) {
      try {
        j.close();
      } catch {
        // already reported by the write that failed, if any
      }
    }
    lock.release();
    if (created && readdirSync(outDir).length === 0) rmdirSync(outDir);
  }

  async function runLocked(): Promise<RunResult> {
    checkResume(opts, true);
    const specText = canonicalJson(runIdentity(spec) as unknown as JsonValue) + "\n";
    const configPath = join(outDir, RUN_FILES.config);
    const stream = buildStream(dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset, spec.config.order);
    if (!existsSync(configPath)) writeFileAtomic(configPath, specText);
    const memory = openRunMemory({ outDir, method, dataset, stream, seed: spec.seed, embedder: services.embedder, source: () => (spec.config.memory_source === undefined ? undefined : memorySourceOf(opts)), schemaOf: (item) => schemaOf(dataset, item) }, services.retriever);
    removeStaleTempFiles(outDir);
    const startedAt = new Date().toISOString();
    const manifestPath = join(outDir, RUN_FILES.manifest);
    const priorManifest = existsSync(manifestPath) ? readJsonFile(manifestPath) : null;
    const transport = countTransport(services.backend, priorManifest === null ? null : priorTransport(priorManifest));
    const timing: TimingRecord | null = memory.active ? (priorTiming(priorManifest) ?? { retrieval_ms: 0, memory_ms: 0, episodes: 0 }) : null;
    writeManifest(outDir, opts, stream.length, "running", startedAt, transport.record(), timing);

    const committed = (trajectories.recover() as unknown[]).map((t) => TrajectorySchema.parse(t));
    const retrievalSteps = committed.reduce((n, t) => n + (memory.active ? t.retrieved_entry_ids.length : 0), 0);
    retrievalLog.recover(retrievalSteps);
    prompts.recover(committed.reduce((n, t) => n + t.call_kinds.length - 1, 0));
    if (committed.length > 0) log(`resuming ${outDir} at stream position ${committed.length}/${stream.length}`);

    // What the committed episodes wrote, rebuilt (and the transductive pre-pass, a source memory).
    await memory.rebuild(committed);

    const all: Trajectory[] = [...committed];
    const cuts = new TruncationLog(method.name);
    let repaired = all.filter((t) => !t.initial_correct && t.final_correct).length;
    let tokens = all.reduce((n, t) => n + t.accounting.total_tokens, 0);
    for (const item of stream.slice(committed.length)) {
      const episode = episodeSpecOf(spec, method, dataset, item);
      const result = await runEpisode(episode, {
        backend: transport.backend,
        score: (example, sql) => services.oracle.score(example, sql),
        execute: (example, sql) => services.oracle.execute(example, sql),
        memory: memory.episodeMemory(),
        embedder: services.embedder,
      });
      // What it stores and the embedding billed to it (its own insertion; transductive_batch's pre-pass negative of its query).
      const planned = await memory.plan(item, result);
      const trajectory = toTrajectory(episode, result, planned.embeddingCalls, planned.embeddingTokens);
      retrievalLog.append(result.retrievalLog.map((r) => canonicalJson(r as unknown as JsonValue)));
      prompts.append(result.prompts.map((p) => canonicalJson({ query_id: item.example.id, stream_position: item.position, kind: p.kind, prompt_hash: p.hash, prompt: p.text } satisfies PromptRecord as unknown as JsonValue)));
      trajectories.append([canonicalJson(trajectory as unknown as JsonValue)]); // commit point
      const insertStart = performance.now();
      await memory.commit(planned, trajectory);
      if (timing) {
        timing.retrieval_ms += result.wallMs.retrieval;
        timing.memory_ms += result.wallMs.memory + (performance.now() - insertStart);
        timing.episodes += 1;
      }
      all.push(trajectory);
      for (const line of cuts.episode(trajectory)) log(line);
      if (!trajectory.initial_correct && trajectory.final_correct) repaired += 1;
      tokens += trajectory.accounting.total_tokens;
      opts.onProgress?.({ done: all.length, total: stream.length, repaired, tokens });
    }
    await memory.finish(all);
    const metrics = runMetrics(all, { maxRepairSteps: spec.config.max_repair_steps });
    writeFileAtomic(join(outDir, RUN_FILES.metrics), runJsonText(metrics));
    writeManifest(outDir, opts, stream.length, "completed", startedAt, transport.record(), timing);
    const cutSummary = cuts.summary(all);
    if (cutSummary !== null) log(cutSummary);
    const retried = transport.record();
    const retriedNote = retried ? `; ${retried.transient_retries} transient server failure(s) retried for ${retried.retried_calls} call(s) (manifest.json transport)` : "";
    log(`completed ${outDir}: ${all.length} episodes, ${repaired} repaired${retriedNote}`);
    return { outDir, trajectories: all, metrics };
  }
}

/** The episode a run plays at one stream position (also what `merit grid --plan` replays, grid-plan.ts). */
export function episodeSpecOf(spec: RunSpec, method: MethodSpec, dataset: Dataset, item: StreamItem): EpisodeSpec {
  return {
    dataset: dataset.name,
    method,
    streamSeed: spec.seed,
    streamPosition: item.position,
    example: item.example,
    schema: schemaOf(dataset, item),
    initial: item.initial,
    feedbackRegime: spec.config.feedback_regime,
    feedbackNoise: spec.config.feedback_noise,
    maxRepairSteps: spec.config.max_repair_steps,
    maxOutputTokens: spec.config.decoding.max_output_tokens,
    promptsDir: spec.config.prompts_dir,
    hookDeadlineS: spec.config.hook_deadline_s,
  };
}

function schemaOf(dataset: Dataset, item: StreamItem): string {
  const schema = dataset.schemas.get(item.example.dbId);
  if (schema === undefined) throw new MeritError(`no schema for database ${item.example.dbId}`);
  return schema;
}

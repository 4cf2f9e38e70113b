/**
 * Analysis stage, model identity of a report (METHOD.md §6.4, §9 "every table records what made
 * it"): the chat model and embedder the runs' manifests record, and whether their hashes are
 * verified entries of models/models.json or models/models.lock.json. A report over a random-weight
 * test fixture, a scripted test double, an unverified file or runs without an identity carries a
 * banner saying its numbers are meaningless (tables, figures and the HTML header all show it); a
 * report over the simulated engine (lib/llm/engines/simulated.ts) carries the SIMULATED ENGINE banner
 * instead — its effects are planted, not measured — and runs of it are never mixed with real runs
 * (`assertNotMixed`).
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TopLevelSpec } from "vega-lite";
import { MeritError } from "../errors.ts";
import type { ModelRecord } from "../experiment/run-dir.ts";
import { SIMULATED_EMBEDDING_KIND, SIMULATED_HEADLINE, SIMULATED_KIND } from "../llm/engines/simulated.ts";
import { readRunIdentity } from "./run-directory.ts";
import type { Table } from "./table.ts";

/** The model identity one run manifest records (defined with the manifest's readers). */
export type { ModelRecord };

/** The random-weight GGUF fixtures of test/fixtures/models (PROVENANCE.md there), by sha256. */
export const TEST_FIXTURE_MODELS: Readonly<Record<string, string>> = {
  "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f": "tiny-random-qwen2.5-instruct.gguf",
  "433f4c32a57b96124c21b83118145ba4dfb7f273544610146548890bb4235860": "tiny-random-bert-bge.gguf",
  "81f226c62d28ed4a1a9b9fa080fcd9f0cc40e0f9d5680036583ff98fbcd035cb": "llama-2-tiny-random.gguf",
  "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d": "stories260K.gguf",
  "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854": "ggml-vocab-bert-bge.gguf",
};

/** Kinds of real backends; any other kind is a test double (e.g. `test-scripted`). */
const REAL_KINDS = new Set(["llama.cpp", "llama.cpp-embedding", "openai-compatible"]);

/** What a report says about its models. */
export interface ModelIdentity {
  /** Distinct chat models of the runs, sorted (null entries: runs whose manifest has none). */
  chat: ModelRecord[];
  /** Distinct embedders of the runs that have one, sorted. */
  embedders: ModelRecord[];
  /** Runs whose manifest records no chat model. */
  unidentified: number;
  /** "Model: …" — one line for table notes, figure subtitles and the HTML header. */
  line: string;
  /** The banner ("TEST MODEL — numbers are meaningless: …") or null when every model is verified. */
  banner: string | null;
  /** The banner's first words alone ("TEST MODEL — numbers are meaningless"), for figure subtitles. */
  headline: string | null;
}

/** The sha256 values listed in models/models.json and models/models.lock.json (any `sha256` field). */
export function verifiedHashes(modelsDir: string = defaultModelsDir()): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "sha256" && typeof x === "string" && /^[0-9a-f]{64}$/i.test(x)) out.add(x.toLowerCase());
        else walk(x);
      }
    }
  };
  for (const name of ["models.json", "models.lock.json"]) {
    const file = join(modelsDir, name);
    if (!existsSync(file)) continue;
    try {
      walk(JSON.parse(readFileSync(file, "utf8")));
    } catch {
      // an unreadable list verifies nothing; the banner then says the hash is unverified
    }
  }
  return out;
}

/** The kit's models/ folder (next to lib/). */
export function defaultModelsDir(): string {
  return fileURLToPath(new URL("../../models/", import.meta.url));
}

/** The identity of the runs' models; `chat[i]` null when run i's manifest has no `backend`. */
export function modelIdentity(chat: readonly (ModelRecord | null)[], embedders: readonly (ModelRecord | null)[], verified: ReadonlySet<string>): ModelIdentity {
  const distinct = (xs: readonly (ModelRecord | null)[]) =>
    [...new Map(xs.filter((x): x is ModelRecord => x !== null).map((x) => [`${x.kind}\u0000${x.model}\u0000${x.modelHash}`, x])).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, x]) => x);
  const chatModels = distinct(chat);
  const embedderModels = distinct(embedders);
  const unidentified = chat.filter((x) => x === null).length;
  const describe = (m: ModelRecord) => `${m.model} (${m.kind}, ${/^[0-9a-f]{64}$/i.test(m.modelHash) ? `sha256 ${m.modelHash.slice(0, 12)}…` : m.modelHash})`;
  const parts = [chatModels.length > 0 ? chatModels.map(describe).join(", ") : "not recorded"];
  if (unidentified > 0 && chatModels.length > 0) parts.push(`${unidentified} run(s) record none`);
  if (embedderModels.length > 0) parts.push(`embedder ${embedderModels.map(describe).join(", ")}`);
  const line = `Model: ${parts.join("; ")}.`;

  const fixture: string[] = [];
  const unverified: string[] = [];
  const simulated: string[] = [];
  for (const m of [...chatModels, ...embedderModels]) {
    const hash = m.modelHash.toLowerCase();
    if (m.kind === SIMULATED_KIND) simulated.push(`${m.model} (parameters sha256 ${m.modelHash.slice(0, 12)}…) plays a frozen model with the response model of docs/METHOD.md "Simulated engine"`);
    else if (m.kind === SIMULATED_EMBEDDING_KIND) simulated.push(`embedder ${m.model} is the simulated engine's hashed bag of words`);
    else if (TEST_FIXTURE_MODELS[hash] !== undefined) fixture.push(`${m.model} is a random-weight test fixture`);
    else if (!REAL_KINDS.has(m.kind)) fixture.push(`${m.model} is a test double (${m.kind})`);
    else if (!verified.has(hash)) unverified.push(`${m.model} (${m.modelHash.slice(0, 12)}…) is not a verified entry of models/models.json or models/models.lock.json`);
  }
  if (unidentified > 0) fixture.push(`${unidentified} run manifest(s) record no model identity`);
  const headline = simulated.length > 0 ? SIMULATED_HEADLINE : fixture.length > 0 ? "TEST MODEL — numbers are meaningless" : unverified.length > 0 ? "UNVERIFIED MODEL — numbers are meaningless until the model is verified" : null;
  const banner = headline === null ? null : `${headline}: ${[...simulated, ...fixture, ...unverified].join("; ")}.`;
  return { chat: chatModels, embedders: embedderModels, unidentified, line, banner, headline };
}

/**
 * Refuses runs of the simulated engine mixed with runs of a model (`merit report`, exit 2): a planted
 * effect compared with a measured one means nothing. `dirs[i]` is the run whose chat model is `chat[i]`.
 */
export function assertNotMixed(chat: readonly (ModelRecord | null)[], dirs: readonly string[]): void {
  const sim = chat.flatMap((m, i) => (m?.kind === SIMULATED_KIND ? [dirs[i]] : []));
  const real = chat.flatMap((m, i) => (m?.kind !== SIMULATED_KIND ? [dirs[i]] : []));
  if (sim.length > 0 && real.length > 0) {
    throw new MeritError(`the runs mix the simulated engine (${sim.length} run(s), e.g. ${sim[0]}) with a model (${real.length} run(s), e.g. ${real[0]}): planted effects cannot be compared with measured ones; report them separately`);
  }
}

/** Subtitle lines of a figure: the headline when there is one, then the chat models (short). */
export function figureSubtitle(identity: ModelIdentity): string[] {
  const models = identity.chat.length > 0 ? identity.chat.map((m) => m.model).join(", ") : "not recorded";
  return [...(identity.headline === null ? [] : [identity.headline]), `Model: ${models}`];
}

/** The note lines a table or figure carries: the model line, then the banner when there is one. */
export function modelNotes(identity: ModelIdentity): string[] {
  return identity.banner === null ? [identity.line] : [identity.banner, identity.line];
}

/** The model identity of finished run directories (their manifest.json), checked against the kit's models/. */
export function runsModelIdentity(dirs: readonly string[], modelsDir: string = defaultModelsDir()): ModelIdentity {
  const ids = dirs.map(readRunIdentity);
  return modelIdentity(ids.map((id) => id.model ?? null), ids.map((id) => id.embedder ?? null), verifiedHashes(modelsDir));
}

/** The table with the model notes (banner, model line) appended, as `merit report` writes it. */
export function withModelNotes(table: Table, identity: ModelIdentity): Table {
  return { ...table, notes: [...table.notes, ...modelNotes(identity)] };
}

/** The figure with the model subtitle under its (string) title, as `merit report` renders it. */
export function withModelSubtitle(spec: TopLevelSpec, identity: ModelIdentity): TopLevelSpec {
  return { ...spec, title: { text: spec.title as string, subtitle: figureSubtitle(identity) } } as TopLevelSpec;
}


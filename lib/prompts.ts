/**
 * Prompt templates (METHOD.md §6.3, format `merit-prompts-v4`): loading the versioned files in
 * prompts/ (or a user's own folder of files with the same names, config `prompts_dir`), strict
 * rendering, and the three prompts of an episode (initial, repair, reflection) built from plain data.
 * Rendering is deterministic; `promptHash` is the SHA-256 of the rendered text before chat
 * templating, logged per call, and `templateSetHash` identifies a template folder in manifests.
 *
 * Structure kept from the reference (§6.3): attempts are numbered from 1 in the attempt history and
 * the reflection prompt; memory blocks follow each other with no blank line between them; Spider's
 * empty dataset context still ends with its newline, so two blank lines separate the schema from
 * `QUESTION:` (the templates hold that layout).
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { datasetAdapter, datasetNames } from "./data/datasets/index.ts";
import type { DatasetName } from "./data/types.ts";
import { MeritError } from "./errors.ts";
import { contentHash, sha256Hex } from "./hash.ts";

export const PROMPT_FORMAT_VERSION = "merit-prompts-v4";
/** The kit's own templates. */
export const PROMPTS_DIR = fileURLToPath(new URL("../prompts/", import.meta.url));

export type PromptKind = "initial" | "repair" | "reflection";

/** Template name for a dataset and kind, e.g. `bird-repair-v4`: its adapter's template family (Spider-Syn uses Spider's). */
export function templateName(dataset: DatasetName, kind: PromptKind): string {
  return `${datasetAdapter(dataset).promptFamily}-${kind}-v4`;
}

/** Every template file of a template folder (the BIRD context partial included), one family per dataset. */
export const TEMPLATE_NAMES: readonly string[] = [
  ...[...new Set(datasetNames().map((d) => datasetAdapter(d).promptFamily))].flatMap((family) => (["initial", "repair", "reflection"] as const).map((k) => `${family}-${k}-v4`)),
  "bird-context-v4",
];

/** A template folder with a trailing slash (null/undefined = the kit's prompts/). */
function folder(dir: string | null | undefined): string {
  if (dir === null || dir === undefined) return PROMPTS_DIR;
  return dir.endsWith("/") ? dir : `${dir}/`;
}

const cache = new Map<string, string>();

/** The template text with partials (`{{> name}}`) expanded; cached per process. */
export function loadTemplate(name: string, templatesDir?: string | null): string {
  const dir = folder(templatesDir);
  const key = dir + name;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let text: string;
  try {
    text = readFileSync(`${dir}${name}.txt`, "utf8");
  } catch (error) {
    const fix = dir === PROMPTS_DIR ? "restore it from the repository (git checkout prompts/)" : `copy prompts/${name}.txt into ${dir} and edit it, or unset prompts_dir in the config`;
    throw new MeritError(`prompt template ${dir}${name}.txt cannot be read; ${fix}`, { cause: error });
  }
  const expanded = text.replace(/\{\{>\s*([\w-]+)\s*\}\}/g, (_, partial: string) => loadTemplate(partial, dir).replace(/\n$/, ""));
  cache.set(key, expanded);
  return expanded;
}

/** SHA-256 of an expanded template (recorded in manifests). */
export function templateHash(name: string, templatesDir?: string | null): string {
  return sha256Hex(loadTemplate(name, templatesDir));
}

/** SHA-256 of every expanded template of a folder, by name. */
export function templateHashes(templatesDir?: string | null): Record<string, string> {
  return Object.fromEntries(TEMPLATE_NAMES.map((name) => [name, templateHash(name, templatesDir)]));
}

/** content_hash of `templateHashes`: one value naming a template folder's content (manifests, caches). */
export function templateSetHash(templatesDir?: string | null): string {
  return contentHash(templateHashes(templatesDir));
}

/** SHA-256 of a rendered prompt (before chat templating), logged per call. */
export function promptHash(prompt: string): string {
  return sha256Hex(prompt);
}

/**
 * Renders `{{name}}`, `{{#name}}…{{/name}}` (kept when the value is non-empty) and `{{^name}}…{{/name}}`
 * (kept when empty). A slot without a value, or a value no slot uses, is an error.
 */
export function renderTemplate(template: string, values: Record<string, string>, name = "template"): string {
  const used = new Set<string>();
  const sections = /\{\{([#^])([\w]+)\}\}([\s\S]*?)\{\{\/\2\}\}/g;
  let text = template.replace(sections, (_, mode: string, key: string, body: string) => {
    const value = lookup(values, key, name);
    used.add(key);
    const present = value.trim() !== "";
    return (mode === "#") === present ? body : "";
  });
  // Values are inserted in a single pass, so `{{…}}` inside a value is never expanded.
  text = text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    used.add(key);
    return lookup(values, key, name);
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length > 0) throw new MeritError(`prompt ${name}: values ${unused.join(", ")} are not used by the template; check the template version`);
  return text;
}

function lookup(values: Record<string, string>, key: string, name: string): string {
  const value = values[key];
  if (value === undefined) throw new MeritError(`prompt ${name}: no value for slot {{${key}}}; the template and lib/prompts.ts disagree`);
  return value;
}

/** What a prompt needs to know about the question. */
export interface PromptQuestion {
  dataset: DatasetName;
  schema: string;
  question: string;
  /** BIRD evidence ("" when absent; always "" for Spider). */
  evidence: string;
}

/** A memory entry as shown in a repair prompt (METHOD.md §4.1 field names). */
export interface PromptMemory {
  entry_id: string;
  error_type: string;
  failure_context: string;
  successful_direction: string;
  attempted_sql_delta: string;
  observed_outcome: string;
  observed_db_error: string | null;
}

/** One attempt of the current episode, as shown in prompts. */
export interface PromptAttempt {
  sql: string;
  status: string;
  dbError: string | null;
}

/** A fixed few-shot example (the `vanilla` method). */
export interface StaticExample {
  source: string;
  question: string;
  evidence?: string;
  sql: string;
}

/** The dataset's own template slots (BIRD: `evidence`), from its adapter. */
function contextValues(q: PromptQuestion): Record<string, string> {
  return datasetAdapter(q.dataset).promptContext(q);
}

/** The initial prompt (one per query; feeds the shared initial cache). */
export function initialPrompt(q: PromptQuestion, templatesDir?: string | null): string {
  const name = templateName(q.dataset, "initial");
  return renderTemplate(loadTemplate(name, templatesDir), { schema: q.schema, question: q.question, ...contextValues(q) }, name);
}

export interface RepairPromptInput extends PromptQuestion {
  positives: readonly PromptMemory[];
  negatives: readonly PromptMemory[];
  reflections: readonly string[];
  staticExamples?: readonly StaticExample[];
  /** Every attempt of the episode so far, the initial SQL first. */
  attempts: readonly PromptAttempt[];
  /** Classifier type of the last attempt, or `Unknown`. */
  currentErrorType: string;
  /** A method's memory hook section (lib/methods/hooks.ts `renderNotes`), "" or absent when none. */
  memoryNotes?: string;
}

/** The repair prompt: sections 1–9 of METHOD.md §6.3 in order. */
export function repairPrompt(input: RepairPromptInput, templatesDir?: string | null): string {
  const name = templateName(input.dataset, "repair");
  const last = input.attempts[input.attempts.length - 1];
  // Memory blocks follow each other with no blank line between them (METHOD.md §6.3).
  const none = (items: string[]) => (items.length === 0 ? "(none)" : items.join("\n"));
  const positives = input.positives.map((m, i) =>
    [
      `[Confirmed successful repair ${i + 1}]`,
      `Entry ID: ${m.entry_id}`,
      `Error type: ${m.error_type}`,
      `Failure context: ${m.failure_context}`,
      `Observed successful direction: ${m.successful_direction}`,
      `SQL delta: ${m.attempted_sql_delta}`,
    ].join("\n"),
  );
  const negatives = input.negatives.map((m, i) =>
    [
      `[OBSERVED FAILED DIRECTION ${i + 1}]`,
      `Entry ID: ${m.entry_id}`,
      `Error type: ${m.error_type}`,
      `Failure context: ${m.failure_context}`,
      `Attempted SQL delta: ${m.attempted_sql_delta}`,
      `Observed outcome: ${m.observed_outcome}`,
      `Observed DB error: ${m.observed_db_error ?? ""}`,
    ].join("\n"),
  );
  const statics = (input.staticExamples ?? []).map((e, i) =>
    [`[Static example ${i + 1}; source=${e.source}]`, `Question: ${e.question}`, ...(e.evidence ? [`Evidence: ${e.evidence}`] : []), `SQL: ${e.sql}`].join("\n"),
  );
  const values: Record<string, string> = {
    static_examples: statics.join("\n\n"),
    positive_memories: none(positives),
    negative_memories: none(negatives),
    reflections: input.reflections.length === 0 ? "(none)" : input.reflections.map((r, i) => `[Local reflection ${i + 1}] ${r}`).join("\n"),
    status: last.status,
    error_type: input.currentErrorType,
    db_error: last.dbError ?? "(none)",
    schema: input.schema,
    question: input.question,
    attempts: input.attempts.map((a, i) => `[Attempt ${i + 1} — observed unsuccessful]\n${a.sql}`).join("\n\n"),
    ...contextValues(input),
  };
  // The memory hook's section (prompts/ v4 templates keep an optional slot for it; a template folder
  // made before the slot renders as it did, unless a memory hook has notes to show).
  const template = loadTemplate(name, templatesDir);
  const notes = input.memoryNotes ?? "";
  if (/\{\{[#^]?memory_notes\}\}/.test(template)) values.memory_notes = notes;
  else if (notes !== "") throw new MeritError(`prompt template ${folder(templatesDir)}${name}.txt has no {{memory_notes}} slot for the method's memory notes; copy the slot from prompts/${name}.txt`);
  return renderTemplate(template, values, name);
}

export interface ReflectionPromptInput extends PromptQuestion {
  attempts: readonly PromptAttempt[];
  currentErrorType: string;
}

/** The Reflexion-style reflection prompt (METHOD.md §6.3, last paragraph). */
export function reflectionPrompt(input: ReflectionPromptInput, templatesDir?: string | null): string {
  const name = templateName(input.dataset, "reflection");
  const blocks = input.attempts.map((a, i) => `[Attempt ${i + 1}]\nSQL: ${a.sql}\nOutcome: status=${a.status}; db_error=${a.dbError ?? "(none)"}`);
  const values: Record<string, string> = {
    schema: input.schema,
    question: input.question,
    error_type: input.currentErrorType,
    attempt_outcomes: blocks.join("\n\n"),
    ...contextValues(input),
  };
  return renderTemplate(loadTemplate(name, templatesDir), values, name);
}

/** The reflection text of a model response (METHOD.md §6.2): first <reflection> block, else text before a closing tag, else all. */
export function extractReflection(response: string): string {
  const tagged = /<reflection>([\s\S]*?)<\/reflection>/i.exec(response);
  if (tagged) return tagged[1].trim();
  const close = response.search(/<\/reflection>/i);
  if (close >= 0) return response.slice(0, close).replace(/<reflection>/i, "").trim();
  return response.trim();
}

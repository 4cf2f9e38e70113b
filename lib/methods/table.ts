/**
 * Methods, the method table as `merit methods` prints it and docs/DESIGN.md §1 shows it (a test
 * keeps the two equal): one Markdown row per registered method — its hooks, each factory's args that
 * differ from its defaults, its declared sight (what its hooks may read) and its description. Aliases name their target. Methods that
 * port another work (a `citation`) or have hooks are listed again in a second table: their
 * source and what their hooks may read, their declared sight (the first table's rows stay as they are).
 * @module
 */
import { canonicalJson, type JsonValue } from "../hash.ts";
import { callMostText, type HooksRecord } from "./hooks.ts";
import type { MethodRecord } from "./method.ts";
import { MERIT_MEMORY, MERIT_MEMORY_DEFAULTS, RANKERS } from "./merit-memory.ts";
import { aliasTarget, getMethod, hasPluginHooks, methodDefinition, methodNames } from "./registry.ts";
import { sightLabel } from "./sight.ts";

/** `name(arg=value, ...)` with the args that differ from `defaults` (`name` when none). */
export function factoryLabel(name: string, args: Readonly<Record<string, JsonValue>>, defaults: Readonly<Record<string, JsonValue>>): string {
  const changed = Object.entries(args).filter(([k, v]) => canonicalJson(v) !== canonicalJson(defaults[k] ?? null));
  return changed.length === 0 ? name : `${name}(${changed.map(([k, v]) => `${k}=${canonicalJson(v)}`).join(", ")})`;
}

/** MERIT's memory in one label: the args that differ from MERIT's, the ranker's as `ranker_args.NAME`. */
function meritMemoryLabel(args: Readonly<Record<string, JsonValue>>): string {
  const { ranker_args: rankerArgs, ...rest } = args;
  const ranker = String(args.ranker);
  const rankerDefaults = RANKERS.has(ranker) ? RANKERS.get(ranker).defaults : {};
  const flat: Record<string, JsonValue> = { ...rest };
  const flatDefaults: Record<string, JsonValue> = { ...MERIT_MEMORY_DEFAULTS };
  for (const [k, v] of Object.entries((rankerArgs ?? {}) as Record<string, JsonValue>)) {
    flat[`ranker_args.${k}`] = v;
    flatDefaults[`ranker_args.${k}`] = rankerDefaults[k] ?? null;
  }
  return factoryLabel(MERIT_MEMORY, flat, flatDefaults);
}

/** A method's hooks in one cell: `no repair`, `memory:…`, `step:…`, `classify:…`, `calls(…)`, or `repair only`. */
export function hooksLabel(record: MethodRecord): string {
  const labels = hookLabels(record.hooks);
  if (!record.repairs) labels.unshift("no repair");
  return labels.length === 0 ? "repair only" : labels.join(" + ");
}

/** The hooks of a method: `memory:merit_memory(args)`, `classify:NAME(n types)`, `memory:NAME`, `step:NAME`, `propose:NAME`, `calls(kind<=most)` (`@T` for a kind sampled at temperature T). */
function hookLabels(h: HooksRecord | undefined): string[] {
  if (!h) return [];
  const stepKinds = h.step?.name === "reflect" ? new Set(["reflection"]) : new Set<string>();
  const calls = Object.entries(h.calls).filter(([k]) => !stepKinds.has(k));
  const memory = h.memory ? ("args" in h.memory ? [`memory:${meritMemoryLabel(h.memory.args)}`] : [`memory:${h.memory.name}${h.memory.embeds_notes ? "(embedded)" : ""}`]) : [];
  return [
    ...(h.classify ? [`classify:${h.classify.name}(${h.classify.types.length} types)`] : []),
    ...memory,
    ...(h.step ? [`step:${h.step.name}`] : []),
    ...(h.propose ? [`propose:${h.propose.name}`] : []),
    ...(calls.length > 0 ? [`calls(${calls.map(([k, d]) => `${k}<=${callMostText(d.most)}${d.per ? `/${d.per}` : ""}${d.temperature !== undefined ? `@${d.temperature}` : ""}`).join(", ")})`] : []),
  ];
}

/** The Markdown table of every registered method, in registration order. */
export function methodTable(names: readonly string[] = methodNames()): string[] {
  const rows = names.map((name) => {
    const target = aliasTarget(name);
    const method = getMethod(name);
    return `| \`${name}\` | ${target === null ? hooksLabel(method.record) : `alias of \`${target}\``} | ${sightLabel(method.sight)} | ${method.description.replaceAll("|", "\\|")} |`;
  });
  return ["| method | hooks (factory args that differ from the defaults) | its hooks read | description |", "| --- | --- | --- | --- |", ...rows];
}

/**
 * The Markdown table of the methods that declare a citation or have hooks ([] when none): source, and
 * what their hooks may read — the declared sight that builds their views (lib/methods/sight.ts).
 */
export function sourcesTable(names: readonly string[] = methodNames()): string[] {
  const rows = names.flatMap((name) => {
    if (aliasTarget(name) !== null) return [];
    const def = methodDefinition(name);
    const method = getMethod(name);
    if (def.citation === undefined && !hasPluginHooks(method)) return [];
    return [`| \`${name}\` | ${(def.citation ?? "").replaceAll("|", "\\|")} | ${sightLabel(method.sight)} |`];
  });
  return rows.length === 0 ? [] : ["| method | source | its hooks read |", "| --- | --- | --- |", ...rows];
}

/**
 * The Markdown table of the methods built from a factory of settings (lib/methods/settings.ts; []
 * when none): each setting with its value, its range and what it means. A study arm changes them
 * with `args: { NAME: VALUE }`.
 */
export function settingsTable(names: readonly string[] = methodNames()): string[] {
  const rows = names.flatMap((name) => {
    if (aliasTarget(name) !== null) return [];
    const def = methodDefinition(name);
    if (def.settings === undefined || def.settingSpecs === undefined) return [];
    return Object.entries(def.settingSpecs).map(([k, spec]) => `| \`${name}\` | \`${k}\` | ${def.settings![k]} | ${spec.min}..${spec.max} | ${spec.doc.replaceAll("|", "\\|")} |`);
  });
  return rows.length === 0 ? [] : ["| method | setting | value | range | what it bounds |", "| --- | --- | --- | --- | --- |", ...rows];
}

/**
 * Methods, the method table as `merit methods` prints it and docs/DESIGN.md §1 shows it (a test
 * keeps the two equal): one Markdown row per registered method — its parts with the args that
 * differ from each part's defaults, and its description. Aliases name their target. Methods that
 * port another work (a `citation`) or have hooks are listed again in a second table: their
 * source and what their hooks may read, their declared sight (the first table's rows stay as they are).
 * @module
 */
import { canonicalJson } from "../hash.ts";
import { callMostText } from "./hooks.ts";
import type { MethodParts } from "./method.ts";
import { PARTS, type PartRef, type PartRole } from "./parts.ts";
import { aliasTarget, getMethod, methodDefinition, methodNames } from "./registry.ts";
import { sightLabel } from "./sight.ts";

/** `name(arg=value, ...)` with the args that differ from the part's defaults (`name` when none). */
export function partLabel(role: PartRole, ref: PartRef): string {
  const defaults = PARTS[role].get(ref.name).defaults;
  const changed = Object.entries(ref.args).filter(([k, v]) => canonicalJson(v) !== canonicalJson(defaults[k]));
  return changed.length === 0 ? ref.name : `${ref.name}(${changed.map(([k, v]) => `${k}=${canonicalJson(v)}`).join(", ")})`;
}

/** The parts of a method in one cell: planner + ranker + writer, steps, or `no repair`. */
export function partsLabel(parts: MethodParts): string {
  const labels = [
    ...(["planner", "ranker", "writer"] as const).flatMap((role) => {
      const ref = parts[role];
      return ref ? [partLabel(role, ref)] : [];
    }),
    ...parts.steps.map((s) => partLabel("step", s)),
    ...hookLabels(parts),
  ];
  if (!parts.repairs) labels.unshift("no repair");
  return labels.length === 0 ? "repair only" : labels.join(" + ");
}

/** The hooks of a method: `classify:NAME(n types)`, `memory:NAME`, `propose:NAME`, `calls(kind<=most)` (`@T` for a kind sampled at temperature T). */
function hookLabels(parts: MethodParts): string[] {
  const h = parts.hooks;
  if (!h) return [];
  const calls = Object.entries(h.calls);
  return [
    ...(h.classify ? [`classify:${h.classify.name}(${h.classify.types.length} types)`] : []),
    ...(h.memory ? [`memory:${h.memory.name}${h.memory.embeds_notes ? "(embedded)" : ""}`] : []),
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
    return `| \`${name}\` | ${target === null ? partsLabel(method.parts) : `alias of \`${target}\``} | ${method.description.replaceAll("|", "\\|")} |`;
  });
  return ["| method | parts (args that differ from the defaults) | description |", "| --- | --- | --- |", ...rows];
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
    if (def.citation === undefined && method.parts.hooks === undefined) return [];
    return [`| \`${name}\` | ${(def.citation ?? "").replaceAll("|", "\\|")} | ${sightLabel(method.sight)} |`];
  });
  return rows.length === 0 ? [] : ["| method | source | its hooks read |", "| --- | --- | --- |", ...rows];
}

/**
 * The Markdown table of the methods built from a factory of settings (lib/methods/settings.ts; []
 * when none): each setting with its value, its range and what it means. A study arm changes them
 * with `args: { settings: { NAME: VALUE } }`.
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

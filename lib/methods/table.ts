/**
 * Methods, the method table as `merit methods` prints it and docs/DESIGN.md §1 shows it (a test
 * keeps the two equal): one Markdown row per registered method — its parts with the args that
 * differ from each part's defaults, and its description. Aliases name their target. Methods that
 * port another work (a `citation`, or a `groundTruth` flag) are listed again in a second table: their
 * source and whether their memory relies on the oracle's verdict (the first table's rows stay as they are).
 * @module
 */
import { canonicalJson } from "../hash.ts";
import { callMostText } from "./hooks.ts";
import type { MethodParts } from "./method.ts";
import { PARTS, type PartRef, type PartRole } from "./parts.ts";
import { aliasTarget, getMethod, methodDefinition, methodNames } from "./registry.ts";

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

/** The hooks of a method: `classify:NAME(n types)`, `memory:NAME`, `calls(kind<=most)`. */
function hookLabels(parts: MethodParts): string[] {
  const h = parts.hooks;
  if (!h) return [];
  const calls = Object.entries(h.calls);
  return [
    ...(h.classify ? [`classify:${h.classify.name}(${h.classify.types.length} types)`] : []),
    ...(h.memory ? [`memory:${h.memory.name}${h.memory.embeds_notes ? "(embedded)" : ""}`] : []),
    ...(h.step ? [`step:${h.step.name}`] : []),
    ...(calls.length > 0 ? [`calls(${calls.map(([k, d]) => `${k}<=${callMostText(d.most)}${d.per ? `/${d.per}` : ""}`).join(", ")})`] : []),
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

/** The Markdown table of the methods that declare a citation or a groundTruth flag ([] when none): source, and whether the memory relies on the oracle's verdict. */
export function sourcesTable(names: readonly string[] = methodNames()): string[] {
  const rows = names.flatMap((name) => {
    if (aliasTarget(name) !== null) return [];
    const def = methodDefinition(name);
    if (def.citation === undefined && def.groundTruth === undefined) return [];
    const truth = def.groundTruth === undefined ? "not stated" : def.groundTruth ? "yes (oracle verdict)" : "no";
    return [`| \`${name}\` | ${(def.citation ?? "").replaceAll("|", "\\|")} | ${truth} |`];
  });
  return rows.length === 0 ? [] : ["| method | source | memory needs ground truth |", "| --- | --- | --- |", ...rows];
}

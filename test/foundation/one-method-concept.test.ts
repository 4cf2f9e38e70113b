// One method concept (issue 36 §1, §5): the parts machinery is gone from lib/ — no `parts:` in a
// definition, no `reflects` flag, no `configureMethod`, none of the deleted modules — and the paper's
// methods are built from the same hook factories as the peers. Comments are left out of the scan.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getMethod, isEntryMemory, isKitHook, methodNames, REFLECT } from "../../lib/methods/index.ts";

const LIB = new URL("../../lib/", import.meta.url).pathname;
const GONE = /\bparts:|\.reflects\b|\breflects:|\bconfigureMethod\b|\bMERIT_PARTS\b|\bPARTS\.|build-policy|builtin-parts|methods\/parts|methods\/policy|memory\/writer/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Code lines of a file, comments blanked (block and line comments). */
function codeLines(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "));
  return text.split("\n").map((l) => l.replace(/(^|[^:"'`])\/\/.*$/, "$1"));
}

describe("one method concept in lib/", () => {
  it("no code line of lib/ names parts, reflects, configureMethod or a deleted module", () => {
    const hits = tsFiles(LIB).flatMap((f) => codeLines(f).flatMap((l, i) => (GONE.test(l) ? [`${f.slice(LIB.length)}:${i + 1}: ${l.trim()}`] : [])));
    expect(hits).toEqual([]);
  });

  it("the deleted modules are gone", () => {
    for (const f of ["methods/parts.ts", "methods/builtin-parts.ts", "methods/build-policy.ts", "methods/policy.ts", "memory/writer.ts"]) expect(existsSync(join(LIB, f)), f).toBe(false);
  });

  it("the check catches what it looks for (it is not vacuous)", () => {
    expect(GONE.test(`registerMethod({ name: "x", parts: {} })`)).toBe(true);
    expect(GONE.test(`if (method.reflects) await reflect();`)).toBe(true);
    expect(GONE.test(`configureMethod(m, settings)`)).toBe(true);
    expect(GONE.test(`const chunks: number[] = [];`)).toBe(false);
  });

  it("every paper memory method is MERIT's memory factory, Reflexion the kit's reflect step, and the peers use the same hook slots", () => {
    for (const name of ["merit", "merit_typerel", "dynamic_rag", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only", "transductive_batch"]) {
      const m = getMethod(name);
      expect(isEntryMemory(m.hooks.memory), name).toBe(true);
      expect(m.record.hooks?.memory, name).toMatchObject({ name: "merit_memory" });
    }
    const reflexion = getMethod("reflexion");
    expect(reflexion.hooks.step?.name).toBe(REFLECT);
    expect(isKitHook(reflexion.hooks.step!)).toBe(true);
    expect(reflexion.hooks.calls?.reflection).toEqual({ most: { per_repair: 1, plus: 1 }, per: "repair_episode" });
    expect(getMethod("iterative").record).toEqual({ repairs: true });
    // every registered method's record is the same shape: repairs, hooks (when any), sight, settings
    for (const name of methodNames()) expect(Object.keys(getMethod(name).record).every((k) => ["repairs", "hooks", "sight", "settings"].includes(k)), name).toBe(true);
  });
});

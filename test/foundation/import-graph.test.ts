/**
 * The import graph of lib/ has no back-arrows (DESIGN.md §1, issue 14 §3): foundations at the lib
 * root import nothing from the pipeline folders, and a lower stage never imports a higher one.
 * Each rule names the importing files and the import paths they must not use.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const LIB = fileURLToPath(new URL("../../lib/", import.meta.url));

/** Relative import specifiers of one lib/ file (static `from "…"` and dynamic `import("…")`). */
function importsOf(file: string): string[] {
  const text = readFileSync(LIB + file, "utf8");
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)"(\.[^"]+)"/g)].map((m) => m[1]);
}

const tsFiles = (folder: string) => readdirSync(LIB + folder).filter((f) => f.endsWith(".ts")).map((f) => (folder ? `${folder}/${f}` : f));

const RULES: { files: string[]; forbidden: RegExp; why: string }[] = [
  { files: ["random.ts", "vector.ts", "file-hash.ts", "hash.ts", "levenshtein.ts", "errors.ts", "registry.ts", "atomic-file.ts", "lock-file.ts"], forbidden: /^(?!\.\/[^/]+\.ts$)/, why: "foundations import only each other (lib-root files)" },
  { files: tsFiles("repair"), forbidden: /^\.\.\/experiment\//, why: "the episode loop does not know the run's files (initial cache)" },
];

/**
 * The layers of lib/, lowest first (DESIGN.md §1). A file may import its own folder and any LOWER
 * layer, never its own layer's other folders or a higher one; so the folders form no circle and
 * nothing runs back up. `.` is the lib-root foundations (every lib/*.ts but the named ones).
 */
const LAYERS: string[][] = [
  ["."],
  ["llm", "data"],
  ["oracle", "prompts.ts"],
  ["classify.ts"],
  ["memory"],
  ["retrieval"],
  ["methods"],
  ["repair"],
  ["plugin.ts"],
  ["experiment"],
  ["analysis"],
  ["report"],
  ["cli"],
  ["cli.ts"],
  ["bin.mjs"],
];
const NAMED_ROOT_FILES = new Set(LAYERS.flat().filter((u) => u.includes(".") && u !== "."));

/** The layer unit of a path relative to lib/: its top folder, a named root file, or "." (foundations). */
function unitOf(path: string): string {
  const [top, ...rest] = path.split("/");
  if (rest.length > 0) return top;
  return NAMED_ROOT_FILES.has(top) ? top : ".";
}
const layerOf = (unit: string): number => LAYERS.findIndex((layer) => layer.includes(unit));

/** Every .ts/.mjs file under lib/, relative to it. */
function libFiles(folder = ""): string[] {
  return readdirSync(LIB + folder, { withFileTypes: true }).flatMap((d) => {
    const path = folder ? `${folder}/${d.name}` : d.name;
    if (d.isDirectory()) return d.name === "assets" ? [] : libFiles(path);
    return /\.(ts|mjs)$/.test(d.name) && !d.name.endsWith(".d.ts") ? [path] : [];
  });
}

describe("import graph", () => {
  it("every import goes to the importer's own folder or a lower layer", () => {
    const files = libFiles();
    const unknown = [...new Set(files.map(unitOf))].filter((u) => layerOf(u) < 0);
    expect(unknown).toEqual([]);
    const upward = files.flatMap((file) =>
      importsOf(file).flatMap((spec) => {
        const target = normalize(join(dirname(file), spec));
        const [from, to] = [unitOf(file), unitOf(relative(".", target))];
        return from !== to && layerOf(to) >= layerOf(from) ? [`${file} → ${spec} (${from} may not import ${to})`] : [];
      }),
    );
    expect(upward).toEqual([]);
    expect(files.length).toBeGreaterThan(150);
  });

  for (const rule of RULES) {
    it(rule.why, () => {
      const offending = rule.files.flatMap((file) => importsOf(file).filter((spec) => rule.forbidden.test(spec)).map((spec) => `${file} → ${spec}`));
      expect(offending).toEqual([]);
    });
  }

  it("sees the imports it checks (the rule is not vacuous)", () => {
    expect(importsOf("repair/scored-attempt.ts")).toContain("../classify.ts");
    expect(importsOf("repair/episode.ts")).toContain("./scored-attempt.ts");
    expect(importsOf("vector.ts")).toEqual(["./errors.ts"]);
  });
});

/**
 * The import graph of lib/ has no back-arrows (DESIGN.md §1, issue 14 §3): foundations at the lib
 * root import nothing from the pipeline folders, and a lower stage never imports a higher one.
 * Each rule names the importing files and the import paths they must not use.
 */
import { readdirSync, readFileSync } from "node:fs";
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
  { files: ["random.ts", "vector.ts", "file-hash.ts", "hash.ts", "levenshtein.ts", "errors.ts", "registry.ts"], forbidden: /^(?!\.\/[^/]+\.ts$)/, why: "foundations import only each other (lib-root files)" },
  { files: tsFiles("repair"), forbidden: /^\.\.\/experiment\//, why: "the episode loop does not know the run's files (initial cache)" },
];

describe("import graph", () => {
  for (const rule of RULES) {
    it(rule.why, () => {
      const offending = rule.files.flatMap((file) => importsOf(file).filter((spec) => rule.forbidden.test(spec)).map((spec) => `${file} → ${spec}`));
      expect(offending).toEqual([]);
    });
  }

  it("sees the imports it checks (the rule is not vacuous)", () => {
    expect(importsOf("repair/episode.ts")).toContain("../classify.ts");
    expect(importsOf("vector.ts")).toEqual(["./errors.ts"]);
  });
});

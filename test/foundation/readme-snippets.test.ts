/**
 * The code of the README's "How to add …" sections compiles against the kit as it is: every fenced
 * ```ts block under a `### How to add …` heading is written, as a plugin file in a folder two levels
 * below the clone (where `"../../lib/plugin.ts"` is lib/plugin.ts, as from studies/NAME/), and
 * type-checked with the project's compiler options; an error is reported at its README line. Each
 * such section has a snippet, and a snippet imports only lib/plugin.ts, the one module a plugin
 * imports — so what the README tells a plugin to start from is exported there. The snippets of
 * "### Calling the library" are compiled the same way (they import lib/'s entry points), and the
 * README's tour of lib/ names every folder of lib/, once each.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Snippet {
  section: string;
  /** README line of the snippet's first code line (1-based). */
  line: number;
  code: string;
}

/** The ```ts blocks under the headings `pick` accepts (`### How to add …` by default), their indentation removed. */
function howToSnippets(readme: string, pick: (heading: string) => boolean = (h) => h.startsWith("How to add")): Snippet[] {
  const snippets: Snippet[] = [];
  let section: string | null = null;
  let block: { indent: number; line: number; lines: string[] } | null = null;
  readme.split("\n").forEach((text, i) => {
    if (block) {
      if (text.trim() === "```") {
        snippets.push({ section: section!, line: block.line, code: block.lines.map((l) => l.slice(Math.min(block!.indent, l.length - l.trimStart().length))).join("\n") + "\n" });
        block = null;
      } else block.lines.push(text);
      return;
    }
    const heading = /^#{1,3} (.*)$/.exec(text);
    if (heading) section = pick(heading[1]) ? heading[1] : null;
    const fence = /^( *)```ts\s*$/.exec(text);
    if (fence && section !== null) block = { indent: fence[1].length, line: i + 2, lines: [] };
  });
  return snippets;
}

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const snippets = howToSnippets(readme);
const librarySnippets = howToSnippets(readme, (h) => h === "Calling the library");
mkdirSync(join(ROOT, "runs"), { recursive: true });
const dir = mkdtempSync(join(ROOT, "runs", ".readme-snippets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README: the snippets of the How to add sections", () => {
  it("every How to add section has a ts snippet, and snippets import lib/plugin.ts only", () => {
    const sections = readme.split("\n").flatMap((l) => /^### (How to add .*)$/.exec(l)?.[1] ?? []);
    expect(sections.length).toBeGreaterThanOrEqual(4);
    for (const s of sections) expect(snippets.filter((x) => x.section === s).length, `${s} has no \`\`\`ts snippet`).toBeGreaterThan(0);
    for (const s of snippets) {
      const imports = [...s.code.matchAll(/^import [^;]* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(imports, `README.md:${s.line}`).toEqual(["../../lib/plugin.ts"]);
    }
  });

  it("every snippet type-checks against the kit (compiler options of tsconfig.json)", () => {
    expect(typeErrors(snippets, "snippet")).toEqual([]);
  });
});

describe("README: Calling the library, and the tour of lib/", () => {
  it("the snippet of Calling the library imports lib/ only and type-checks", () => {
    expect(librarySnippets.length).toBeGreaterThan(0);
    for (const s of librarySnippets) {
      const imports = [...s.code.matchAll(/^import [^;]* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(imports.length, `README.md:${s.line}`).toBeGreaterThan(0);
      for (const spec of imports) expect(spec, `README.md:${s.line}`).toMatch(/^\.\.\/\.\.\/lib\/[^.][^ ]*\.ts$/);
    }
    expect(typeErrors(librarySnippets, "library")).toEqual([]);
  });

  it("the tour of lib/ lists every folder of lib/, once each", () => {
    const section = readme.split("\n### ").find((part) => part.startsWith("The library, `lib/`"));
    expect(section, "README.md has no section ### The library, `lib/`").toBeDefined();
    const listed = [...section!.matchAll(/^- `([^`]+)\/` — /gm)].map((m) => m[1]);
    const folders = readdirSync(join(ROOT, "lib"), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect([...listed].sort()).toEqual(folders.sort());
    expect(new Set(listed).size).toBe(listed.length);
  });
});

/** The type errors of `snippets` compiled as files of the temporary folder (names `prefix-i.ts`), each at its README line. */
function typeErrors(snippets: Snippet[], prefix: string): string[] {
  const files = snippets.map((s, i) => {
    const file = join(dir, `${prefix}-${i}.ts`);
    writeFileSync(file, s.code);
    return file;
  });
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(files, options);
  return files.flatMap((file, i) => {
    const source = program.getSourceFile(file)!;
    return ts.getPreEmitDiagnostics(program, source).map((d) => {
      const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      return `README.md:${snippets[i].line + line} (${snippets[i].section}): ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
    });
  });
}

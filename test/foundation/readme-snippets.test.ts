/**
 * The code of the "How to add …" sections compiles against the kit as it is, wherever they are — the
 * README or a page under docs/ (docs/guides/add-a-method.md, …): every fenced ```ts block under a
 * `# How to add …` heading (levels 1–3) is written, as a plugin file in a folder two levels below the
 * clone (where `"../../lib/plugin.ts"` is lib/plugin.ts, as from studies/NAME/), and type-checked with
 * the project's compiler options; an error is reported at its file and line. Each such section has a
 * snippet, and a snippet imports only lib/plugin.ts, the one module a plugin imports — so what the
 * docs tell a plugin to start from is exported there. The snippets of "Calling the library" are
 * compiled the same way (they import lib/'s entry points), and the README's tour of lib/ names every
 * folder of lib/, once each.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Snippet {
  /** The Markdown file, relative to the clone (README.md, docs/guides/add-a-method.md). */
  file: string;
  section: string;
  /** Line of the snippet's first code line in `file` (1-based). */
  line: number;
  code: string;
}

/** The ```ts blocks under the headings `pick` accepts (`### How to add …` by default), their indentation removed. */
function howToSnippets(file: string, readme: string, pick: (heading: string) => boolean = (h) => h.startsWith("How to add")): Snippet[] {
  const snippets: Snippet[] = [];
  let section: string | null = null;
  let block: { indent: number; line: number; lines: string[] } | null = null;
  readme.split("\n").forEach((text, i) => {
    if (block) {
      if (text.trim() === "```") {
        snippets.push({ file, section: section!, line: block.line, code: block.lines.map((l) => l.slice(Math.min(block!.indent, l.length - l.trimStart().length))).join("\n") + "\n" });
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

/** README.md and every Markdown page under docs/, relative to the clone. */
function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const rel = `${dir}/${name}`;
      return statSync(join(ROOT, rel)).isDirectory() ? walk(rel) : name.endsWith(".md") ? [rel] : [];
    });
  return ["README.md", ...walk("docs").sort()];
}
const docs = docFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
const readme = docs[0].text;
const snippets = docs.flatMap((d) => howToSnippets(d.file, d.text));
const librarySnippets = docs.flatMap((d) => howToSnippets(d.file, d.text, (h) => h === "Calling the library"));
mkdirSync(join(ROOT, "runs"), { recursive: true });
const dir = mkdtempSync(join(ROOT, "runs", ".readme-snippets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README and docs/: the snippets of the How to add sections", () => {
  it("every How to add section has a ts snippet, and snippets import lib/plugin.ts only", () => {
    const sections = docs.flatMap((d) => d.text.split("\n").flatMap((l) => /^#{1,3} (How to add .*)$/.exec(l)?.[1] ?? []));
    expect(sections.length).toBeGreaterThanOrEqual(5);
    for (const s of sections) expect(snippets.filter((x) => x.section === s).length, `${s} has no \`\`\`ts snippet`).toBeGreaterThan(0);
    for (const s of snippets) {
      const imports = [...s.code.matchAll(/^import [^;]* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(imports, `${s.file}:${s.line}`).toEqual(["../../lib/plugin.ts"]);
    }
  });

  it("every snippet type-checks against the kit (compiler options of tsconfig.json)", () => {
    expect(typeErrors(snippets, "snippet")).toEqual([]);
  });
});

describe("Calling the library, and the README's tour of lib/", () => {
  it("the snippet of Calling the library imports lib/ only and type-checks", () => {
    expect(librarySnippets.length).toBeGreaterThan(0);
    for (const s of librarySnippets) {
      const imports = [...s.code.matchAll(/^import [^;]* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(imports.length, `${s.file}:${s.line}`).toBeGreaterThan(0);
      for (const spec of imports) expect(spec, `${s.file}:${s.line}`).toMatch(/^\.\.\/\.\.\/lib\/[^.][^ ]*\.ts$/);
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

/** The type errors of `snippets` compiled as files of the temporary folder (names `prefix-i.ts`), each at its file and line. */
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
      return `${snippets[i].file}:${snippets[i].line + line} (${snippets[i].section}): ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
    });
  });
}

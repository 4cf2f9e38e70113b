/**
 * Every citation of the specification — `METHOD.md §8`, `STYLE.md §2.10`, `DESIGN.md §2` — in lib/,
 * test/, bench/, notebooks/, README.md and docs/guides/ names a section that exists in docs/ (a `## N.` heading, a
 * `### N.M` heading, or item M of a numbered list under `## N.`).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCS = ["METHOD.md", "DESIGN.md", "STYLE.md"] as const;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    return statSync(path).isDirectory() ? files(path) : /\.(ts|mjs|js|ipynb|md|py)$/.test(name) ? [path] : [];
  });
}

/** The section numbers a document defines: "8", "8.3" (heading) and "2.10" (list item 10 under ## 2.). */
function sections(text: string): Set<string> {
  const found = new Set<string>();
  let major: string | null = null;
  for (const line of text.split("\n")) {
    const h2 = /^## (\d+)\. /.exec(line);
    if (h2) {
      major = h2[1];
      found.add(major);
      continue;
    }
    const h3 = /^### (\d+\.\d+) /.exec(line);
    if (h3) found.add(h3[1]);
    const item = /^(\d+)\. /.exec(line);
    if (item && major !== null) found.add(`${major}.${item[1]}`);
  }
  return found;
}

describe("documentation citations", () => {
  const defined = Object.fromEntries(DOCS.map((d) => [d, sections(readFileSync(join(ROOT, "docs", d), "utf8"))]));
  const sources = [...["lib", "test", "bench", "notebooks", "docs/guides"].flatMap((d) => files(join(ROOT, d))), join(ROOT, "README.md")];

  it("every cited section exists in docs/", () => {
    const missing: string[] = [];
    let cited = 0;
    for (const file of sources) {
      const text = readFileSync(file, "utf8");
      // "METHOD.md §2.3, §2.4, §11.3" cites three sections of METHOD.md
      for (const match of text.matchAll(/(METHOD|DESIGN|STYLE)\.md((?:,? ?(?:and )?§ ?\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?)+)/g)) {
        const doc = `${match[1]}.md`;
        for (const ref of match[2].matchAll(/§ ?(\d+(?:\.\d+)?)/g)) {
          cited++;
          if (!defined[doc].has(ref[1])) missing.push(`${file.slice(ROOT.length)}: ${doc} §${ref[1]}`);
        }
      }
    }
    expect(cited).toBeGreaterThan(300);
    expect(missing).toEqual([]);
  });

  it("the README points at docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const doc of DOCS) expect(readme).toContain(`docs/${doc}`);
  });
});

/**
 * Every relative link of README.md and of the Markdown pages under docs/ resolves (issue 39 §24): the
 * file or folder it names exists in the clone, and a `#fragment` into a Markdown file names one of its
 * headings (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for
 * repeats). Links inside code (fenced blocks, `inline code`) are not links; absolute URLs are not checked.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** README.md and every Markdown page under docs/, relative to the clone. */
function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const rel = `${dir}/${name}`;
      return statSync(join(ROOT, rel)).isDirectory() ? walk(rel) : name.endsWith(".md") ? [rel] : [];
    });
  return ["README.md", ...walk("docs").sort()];
}

/** The text of a Markdown file without its fenced blocks and inline code (each line kept, so line numbers hold). */
function prose(text: string): string[] {
  let fence = false;
  return text.split("\n").map((line) => {
    if (/^\s*```/.test(line)) {
      fence = !fence;
      return "";
    }
    return fence ? "" : line.replace(/`[^`]*`/g, "``");
  });
}

/** GitHub's heading anchors of a Markdown file. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fence = !fence;
    const h = fence ? null : /^#{1,6} (.*?)#*\s*$/.exec(line);
    if (!h) continue;
    const base = h[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The relative links `[text](target)` and `![alt](target)` of a Markdown file. */
function links(file: string): Link[] {
  return prose(readFileSync(join(ROOT, file), "utf8")).flatMap((line, i) =>
    [...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
      .map((m) => m[1])
      .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
      .map((target) => ({ file, line: i + 1, target })),
  );
}

/** Why `link` does not resolve, or null when it does. */
function broken(link: Link): string | null {
  const [path, fragment] = link.target.split("#", 2) as [string, string | undefined];
  const file = path === "" ? link.file : normalize(join(dirname(link.file), decodeURIComponent(path)));
  if (file.startsWith("..")) return `${link.file}:${link.line}: ${link.target} leaves the repository`;
  if (!existsSync(join(ROOT, file))) return `${link.file}:${link.line}: ${link.target} — no ${relative(".", file)}`;
  if (fragment !== undefined && file.endsWith(".md") && !anchors(readFileSync(join(ROOT, file), "utf8")).has(fragment)) {
    return `${link.file}:${link.line}: ${link.target} — ${file} has no heading #${fragment}`;
  }
  return null;
}

describe("relative links in README.md and docs/", () => {
  const all = docFiles().flatMap(links);

  it("every one resolves: its file exists, its #fragment names a heading of it", () => {
    expect(all.length).toBeGreaterThan(40);
    expect(all.map(broken).filter((b) => b !== null)).toEqual([]);
  });

  it("the README links every page of docs/guides/ (its list of where to go next)", () => {
    const guides = readdirSync(join(ROOT, "docs", "guides")).filter((n) => n.endsWith(".md") && n !== "README.md");
    const linked = new Set(all.filter((l) => l.file === "README.md").map((l) => normalize(l.target.split("#")[0]!)));
    expect(guides.filter((g) => !linked.has(`docs/guides/${g}`))).toEqual([]);
  });

  it("the checker finds what is broken: a missing file, a missing heading, a link out of the clone", () => {
    expect(broken({ file: "README.md", line: 1, target: "docs/guides/no-such-page.md" })).toMatch(/no docs\/guides\/no-such-page\.md/);
    expect(broken({ file: "docs/guides/setup.md", line: 1, target: "../../README.md#no-such-heading" })).toMatch(/has no heading #no-such-heading/);
    expect(broken({ file: "README.md", line: 1, target: "../outside.md" })).toMatch(/leaves the repository/);
    expect(broken({ file: "docs/guides/setup.md", line: 1, target: "../../README.md#set-up" })).toBeNull();
    expect([...anchors("# The `merit` command\n## Reports: the paper's tables, and what they add\n## A\n## A\n")]).toEqual([
      "the-merit-command",
      "reports-the-papers-tables-and-what-they-add",
      "a",
      "a-1",
    ]);
  });
});

// Tests lib/methods/plugin-use.ts and `merit methods`: a plugin file registers a ranker and a method
// before names are resolved; the record is its path relative to the working folder and the sha256 of
// its content; a missing file, a file that throws and a name clash each fail with one line; how an import
// error becomes that line (importErrorText; the CLI's own, in test/cli/plugin-load-errors.test.ts).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { methodsCommand } from "../../lib/cli/methods.ts";
import type { CommandIO } from "../../lib/cli/command.ts";
import { getMethod, isMethodName, loadPlugins } from "../../lib/methods/index.ts";
import { importErrorText } from "../../lib/plugin-import.ts";

const FIXTURES = "test/fixtures/plugins";
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("loadPlugins", () => {
  it("imports a plugin once and records its path and sha256", async () => {
    expect(isMethodName("newest_first")).toBe(false);
    const records = await loadPlugins([`${FIXTURES}/reverse.ts`, `./${FIXTURES}/reverse.ts`]);
    expect(records).toEqual([{ path: `${FIXTURES}/reverse.ts`, sha256: sha256(`${FIXTURES}/reverse.ts`) }]);
    expect(getMethod("newest_first")).toMatchObject({ canonicalName: "newest_first", record: { repairs: true, hooks: { memory: { name: "merit_memory", args: { ranker: "newest_first", ranker_args: {}, layout: "by_polarity" } } } } });
    expect(await loadPlugins([`${FIXTURES}/reverse.ts`])).toEqual(records); // importing again registers nothing twice
  });
  it("a missing file, a throwing file and a clash fail with one line naming the file", async () => {
    await expect(loadPlugins([`${FIXTURES}/nope.ts`])).rejects.toThrow(/^--plugin test\/fixtures\/plugins\/nope\.ts: no such file; pass the path of a \.ts file that registers methods$/);
    await expect(loadPlugins([`${FIXTURES}/throws.ts`])).rejects.toThrow(/^--plugin test\/fixtures\/plugins\/throws\.ts: failed to load \(this plugin is broken\)$/);
    await expect(loadPlugins([`${FIXTURES}/clash.ts`])).rejects.toThrow(/^--plugin test\/fixtures\/plugins\/clash\.ts: method "merit" is already registered; choose another name$/);
    expect(getMethod("merit").description).toMatch(/^dual-polarity memory/);
  });
  it("importErrorText: a stripping or syntax error's file:line:column, a link error's file:line, else the first line", () => {
    // Node's own error for a file its type stripping cannot parse: the place, the source lines, a ^ under the spot
    const strip = Object.assign(new SyntaxError("Unexpected token `;`. Expected identifier, string literal, numeric literal or [ for the computed key"), { code: "ERR_INVALID_TYPESCRIPT_SYNTAX" });
    strip.stack = `file:///repo/studies/x/a.ts:3\nimport { x } from "./x.ts";\nconst parts = {;\n               ^\n\nSyntaxError [ERR_INVALID_TYPESCRIPT_SYNTAX]: ${strip.message}`;
    expect(importErrorText(strip, "/repo")).toBe(`studies/x/a.ts:3:16: ${strip.message}`);
    expect(importErrorText(strip, "/elsewhere")).toBe(`/repo/studies/x/a.ts:3:16: ${strip.message}`);
    const unsupported = Object.assign(new SyntaxError("TypeScript enum is not supported in strip-only mode"), { code: "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX" });
    unsupported.stack = `/repo/a.ts:2\n  enum A { x }\n  ^^^^^^^^^^^^\n\nSyntaxError [ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX]: ${unsupported.message}`;
    expect(importErrorText(unsupported, "/repo")).toBe(`a.ts:2:3: ${unsupported.message}`);
    const link = new SyntaxError("The requested module '../../lib/plugin.ts' does not provide an export named 'spidr'");
    link.stack = `/repo/studies/x/a.ts:1\nimport { spidr } from "../../lib/plugin.ts";\n         ^\n\nSyntaxError: ${link.message}`;
    expect(importErrorText(link, "/repo")).toBe(`studies/x/a.ts:1: ${link.message}`);
    expect(importErrorText(new Error("this plugin is broken\nsecond line"))).toBe("this plugin is broken");
  });
});

describe("merit methods", () => {
  it("prints the registry with a plugin's method and ranker, and full records with --json", async () => {
    const out: string[] = [];
    const io: CommandIO = { out: (l) => out.push(...l.split("\n")), err: () => {} };
    expect(await methodsCommand.run(["--plugin", `${FIXTURES}/reverse.ts`], io)).toBe(0);
    // a method's row: its name, its hooks (the args that differ from the defaults), …, its description
    const row = (start: string, end: string) => out.some((l) => l.startsWith(start) && l.endsWith(end));
    expect(row('| `random_same_type` | memory:merit_memory(ranker="random") |', "| MERIT pools, seeded shuffle instead of scoring (seed from random_seed\\|query\\|iteration\\|polarity) |"), out.join("\n")).toBe(true);
    expect(row('| `newest_first` | memory:merit_memory(ranker="newest_first") |', "| MERIT pools, newest entries first |"), out.join("\n")).toBe(true);
    expect(out.some((l) => l.startsWith("| ranker (memory arg `ranker`) | `newest_first` | {} |"))).toBe(true);
    out.length = 0;
    expect(await methodsCommand.run(["--json"], io)).toBe(0);
    const all = JSON.parse(out.join("\n"));
    expect(all.merit_typerel.method_parts.hooks.memory).toMatchObject({ name: "merit_memory", args: { ranker: "hybrid", ranker_args: { bm25_weight: 0.25, dense_weight: 0.75, type_bonus: 0.1 }, type_filter: "high_reliability" } });
    expect(all.zeroshot.method_parts).toEqual({ repairs: false });
    expect(all.reflexion.method_parts).toEqual({ repairs: true, hooks: { calls: { reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" } }, step: { name: "reflect", args: {} } } });
  });
});

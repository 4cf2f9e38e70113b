/**
 * A method named twice under two of its names (`merit` and its alias `merit_full`, README "The
 * `merit` command") is refused like any repeated stream: one line naming both names, exit 2, before
 * any run folder exists — in every shard of a sharded grid too. Run in-process through main().
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { checkStreams } from "../../lib/experiment/grid.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-method-alias-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const CONFIG = join(tmp, "config.json");
writeFileSync(CONFIG, JSON.stringify({ dataset: "spider", data_dir: join(ROOT, "data/spider"), initial_cache: join(tmp, "no-initial.json"), call_cache: join(tmp, "calls.sqlite") }));

async function merit(argv: string[]) {
  const err: string[] = [];
  const out: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, err, out };
}

describe("a method alias named beside its method", () => {
  it("checkStreams refuses merit and merit_full with the same seed, in either order", () => {
    expect(() => checkStreams([{ method: "merit", seed: 0, outDir: "a" }, { method: "merit_full", seed: 0, outDir: "b" }])).toThrow("merit_full is another name of merit (an alias), so merit seed 0 is asked for twice; name each method once");
    expect(() => checkStreams([{ method: "merit_full", seed: 1, outDir: "a" }, { method: "merit", seed: 1, outDir: "b" }])).toThrow("merit_full is another name of merit (an alias), so merit seed 1 is asked for twice");
    // different seeds are different streams
    expect(() => checkStreams([{ method: "merit", seed: 0, outDir: "a" }, { method: "merit_full", seed: 1, outDir: "b" }])).not.toThrow();
  });

  it.each([[[]], [["--shard", "0/2"]], [["--shard", "1/2"]]])("`merit grid --methods merit,merit_full` %j: one line, exit 2, nothing created", async (shard) => {
    const out = join(tmp, `grid-${shard.join("").replace(/\W/g, "")}`);
    const r = await merit(["grid", "--config", CONFIG, "--methods", "merit,merit_full", "--seeds", "0", "--out", out, ...shard]);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toContain("merit_full is another name of merit (an alias)");
    expect(r.err[0]).toMatch(/see `merit grid --help`$/);
    expect(existsSync(out)).toBe(false);
  });
});

// `merit grid --help` lists every flag grid accepts, with what `--plugin` may register (issue 21 §3),
// and the flags of `merit run` it does not take are refused in one line instead of being ignored.
import { describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { gridCommand } from "../../lib/cli/run.ts";

describe("merit grid --help", () => {
  it("names every accepted flag and what a plugin registers", () => {
    for (const flag of ["config", "methods", "seeds", "limit", "out", "resume", "model", "threads", "sequences", "shard", "plan", "json", "plugin", "allow-single-db"]) {
      expect(gridCommand.usage).toMatch(new RegExp(`--${flag}\\b`));
    }
    expect(gridCommand.usage).toMatch(/registers methods \(hook sets\), rankers, datasets,\s+SQL executors or inference engines/);
    expect(gridCommand.usage, "methods are hooks, not parts (issue 36)").not.toMatch(/parts/);
  });
  it("refuses run's --method and --seed, and run refuses --methods", async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (l: string) => err.push(l) };
    expect(await main(["grid", "--config", "configs/demo.json", "--methods", "merit", "--method", "merit"], io)).toBe(2);
    expect(await main(["run", "--config", "configs/demo.json", "--method", "merit", "--seed", "0", "--methods", "merit"], io)).toBe(2);
    expect(await main(["run", "--config", "configs/demo.json", "--method", "merit", "--seed", "0", "--plan"], io)).toBe(2);
    expect(err).toEqual([
      "merit grid: --method does not apply here; merit grid takes --methods a,b,...; see `merit grid --help`",
      "merit run: --methods does not apply here; merit run takes one --method (merit grid takes --methods); see `merit run --help`",
      "merit run: --plan does not apply here; --plan is for merit grid; see `merit run --help`",
    ]);
  });
});

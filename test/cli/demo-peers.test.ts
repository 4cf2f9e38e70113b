// The peers demo (`merit demo --peers`, `make demo-peers`; issue "The peers on the same stream" §3,
// issue 38 §2): merit and the nine peer memory methods on the demo's queries on the simulated engine.
// A rerun rewrites results/demo-peers byte for byte with nothing replayed, every peer writes and
// retrieves notes (the closing counts), and the report carries the SIMULATED ENGINE banner; the plan
// counts the peers' declared hook calls; --peers refuses --full and --save-cache.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { controlSteps, demoPlan, PEERS_DEMO } from "../../lib/report/demo.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { PEER_METHODS } from "../../lib/experiment/grid-plan.ts";
import { budget } from "../helpers/budget.ts";

/** sha256 of every file under `dir` (and of each extra file), by path. */
function snapshot(dir: string, extra: string[]): Map<string, string> {
  const files: string[] = [...extra];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) (e.isDirectory() ? walk : (p: string) => files.push(p))(join(d, e.name));
  };
  walk(dir);
  return new Map(files.sort().map((f) => [f, createHash("sha256").update(readFileSync(f)).digest("hex")]));
}

describe("merit demo --peers", () => {
  it("the profile: merit and every peer, its own config, runs folder, caches and report with the peers table, curves and diagnostics", () => {
    expect(PEERS_DEMO.methods).toEqual(["merit", ...PEER_METHODS]);
    expect(PEERS_DEMO.replayCache).toBeNull(); // the simulated engine answers every call itself
    expect(PEERS_DEMO.workingCache.startsWith(`${PEERS_DEMO.runsDir}/`)).toBe(true);
    expect(PEERS_DEMO.reportDir).toBe("results/demo-peers");
    expect(PEERS_DEMO.reportFlags).toEqual(["--all-methods", "--peers", [...PEER_METHODS, "iterative_budget"].join(","), "--conditions", "max_repair_steps", "--diagnostics"]);
    // the equal-budget control: Iterative as the arm iterative_budget, K = 3 + the most extra calls a peer declares (reasoning_bank's judge + distill)
    expect(PEERS_DEMO.control).toEqual({ arm: "iterative_budget", method: "iterative", budgetOf: PEER_METHODS });
    expect(controlSteps(PEERS_DEMO.control!, { max_repair_steps: 3 })).toBe(5);
    // the long Iterative run the report reads at every K′ ≤ 15 (METHOD.md §13.8)
    expect(PEERS_DEMO.longRun).toEqual({ arm: "iterative_long", method: "iterative", k: 15 });
    const config = loadConfig(PEERS_DEMO.configFile);
    expect(config.max_repair_steps).toBe(3);
    expect(config.model.backend).toBe("simulated");
    expect(config.embedder.backend).toBe("simulated");
    expect(config.initial_cache.startsWith(`${PEERS_DEMO.runsDir}/`)).toBe(true);
  });

  it("the plan counts the peers' declared calls", () => {
    const config = { ...loadConfig(PEERS_DEMO.configFile), call_cache: PEERS_DEMO.workingCache };
    const plan = demoPlan({ full: false, limit: PEERS_DEMO.quickLimit, config, replayRows: null, profile: PEERS_DEMO }).join("\n");
    // 3 orders × [90 failed × (3 repairs × 10 methods + hooks: judge+distill 2, distill 1, curate 1,
    // synthesize 1, induce 1, critique 1, advise 1) + 10 correct × (2 + 1 + 1 + 1)] = 3 × (90 × 38 + 10 × 5) = 10,410,
    // the control: 3 orders × 90 failed × 5 repairs = 1,350; the long Iterative run: 3 × 90 × 15 = 4,050.
    expect(plan).toMatch(/\(30 runs\) on up to 90 initially failed \+ 10 initially correct queries .*K = 3, and the equal-budget control iterative_budget \(iterative with K = 5, 3 runs\), and the long run iterative_long \(iterative with K = 15, 3 runs, read at every K′ ≤ 15\): at most 15,810 model calls/);
    expect(plan).toContain("the simulated engine (configs/simulated-engine.json), embedder its hashed bag of words");
    expect(plan).toContain("simulated: every call answered by the response model from (seed, prompt), nothing replayed");
  });

  it("--peers with --full is one usage line", async () => {
    const err: string[] = [];
    expect(await main(["demo", "--peers", "--full"], { out: () => {}, err: (l) => err.push(l) })).toBe(2);
    expect(err).toEqual([expect.stringMatching(/--peers runs the quick peers demo only \(got --full\)/)]);
  });

  it("--peers --save-cache is one usage line: there is no call cache to save", async () => {
    const err: string[] = [];
    expect(await main(["demo", "--peers", "--save-cache"], { out: () => {}, err: (l) => err.push(l) })).toBe(2);
    expect(err).toEqual([expect.stringMatching(/--peers runs on the simulated engine, which answers every call itself: there is no call cache to save/)]);
  });

  it(
    "reruns on the simulated engine: results/demo-peers unchanged, every peer writes and retrieves notes, the banner on every table",
    async () => {
      const before = snapshot(PEERS_DEMO.reportDir, []);
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(["demo", "--peers"], { out: (l) => out.push(l), err: (l) => err.push(l) });
      expect(code, err.join("\n")).toBe(0);
      expect(err.join("\n")).toContain("SIMULATED ENGINE — effects are planted, not measured");
      expect(snapshot(PEERS_DEMO.reportDir, [])).toEqual(before);
      expect(existsSync("results/demo-peers-call-cache.sqlite")).toBe(false);
      expect(readFileSync(join(PEERS_DEMO.reportDir, "tables", "peers.md"), "utf8")).toContain("SIMULATED ENGINE — effects are planted, not measured");
      // the closing counts: notes written and retrieved per method
      const text = out.join("\n");
      for (const m of ["merit", ...PEER_METHODS]) {
        const row = new RegExp(`^\\| ${m} +\\| 3 +\\| (\\d+) +\\| (\\d+) +\\|`, "m").exec(text);
        expect(row, m).not.toBeNull();
        expect(Number(row![1]), `${m} notes written`).toBeGreaterThan(0);
        expect(Number(row![2]), `${m} notes retrieved`).toBeGreaterThan(0);
      }
      expect(statSync(join(PEERS_DEMO.reportDir, "tables", "peers.md")).size).toBeGreaterThan(0);
    },
    budget(300_000),
  );
});

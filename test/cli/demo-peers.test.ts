// The peers demo (`merit demo --peers`, `make demo-peers`; issue "The peers on the same stream" §3):
// merit and the nine peer memory methods on the demo's queries, every model call replayed from its own
// committed cache. A replay computes no model call and no embedding ("0 computed" in the log) and
// rewrites results/demo-peers and leaves its committed cache byte for byte as committed; the plan
// counts the peers' declared hook calls; --peers refuses --full and takes --save-cache.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { controlSteps, demoPlan, PEERS_DEMO, PEERS_REPLAY_CACHE } from "../../lib/report/demo.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { PEER_METHODS } from "../../lib/experiment/grid-plan.ts";
import { quickConfig } from "../../lib/experiment/quick-config.ts";
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
    expect(PEERS_DEMO.replayCache).toBe("results/demo-peers-call-cache.sqlite");
    expect(PEERS_DEMO.workingCache.startsWith(`${PEERS_DEMO.runsDir}/`)).toBe(true);
    expect(PEERS_DEMO.reportDir).toBe("results/demo-peers");
    expect(PEERS_DEMO.reportFlags).toEqual(["--all-methods", "--peers", [...PEER_METHODS, "iterative_budget"].join(","), "--conditions", "max_repair_steps", "--diagnostics"]);
    // the equal-budget control: Iterative as the arm iterative_budget, K = 2 + the most extra calls a peer declares (reasoning_bank's judge + distill)
    expect(PEERS_DEMO.control).toEqual({ arm: "iterative_budget", method: "iterative", budgetOf: PEER_METHODS });
    expect(controlSteps(PEERS_DEMO.control!, { max_repair_steps: 2 })).toBe(4);
    const config = loadConfig(PEERS_DEMO.configFile);
    expect(config.max_repair_steps).toBe(2);
    expect(config.initial_cache.startsWith(`${PEERS_DEMO.runsDir}/`)).toBe(true);
  });

  it("the plan counts the peers' declared calls", () => {
    const config = { ...quickConfig(loadConfig(PEERS_DEMO.configFile)), call_cache: PEERS_DEMO.workingCache };
    const plan = demoPlan({ full: false, limit: PEERS_DEMO.quickLimit, config, replayRows: 208, profile: PEERS_DEMO }).join("\n");
    // 3 orders × [6 failed × (2 repairs × 10 methods + hooks: judge+distill 2, distill 1, curate 1,
    // synthesize 1, induce 1, critique 1, advise 1) + 2 correct × (2 + 1 + 1 + 1)] = 3 × (6 × 28 + 2 × 5) = 534,
    // and the control: 3 orders × 6 failed × 4 repairs = 72.
    expect(plan).toMatch(/\(30 runs\) on up to 6 initially failed \+ 2 initially correct queries .*K = 2, and the equal-budget control iterative_budget \(iterative with K = 4, 3 runs\): at most 606 model calls/);
    expect(plan).toContain(`replay: 208 stored model calls from ${PEERS_REPLAY_CACHE}`);
  });

  it("--peers with --full is one usage line", async () => {
    const err: string[] = [];
    expect(await main(["demo", "--peers", "--full"], { out: () => {}, err: (l) => err.push(l) })).toBe(2);
    expect(err).toEqual([expect.stringMatching(/--peers runs the quick peers demo only \(got --full\)/)]);
  });

  it(
    "replays from the committed cache: 0 model calls and 0 embeddings computed, results/demo-peers and the cache unchanged",
    async () => {
      if (!existsSync(PEERS_REPLAY_CACHE)) return; // before the first --save-cache
      const before = snapshot(PEERS_DEMO.reportDir, [PEERS_REPLAY_CACHE]);
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(["demo", "--peers"], { out: (l) => out.push(l), err: (l) => err.push(l) });
      expect(code, err.join("\n")).toBe(0);
      expect(err).toContain(`LLM calls: 0 computed, 478 from the call cache (${PEERS_DEMO.workingCache})`);
      expect(err).toContain(`LLM calls: 0 computed, 72 from the call cache (${PEERS_DEMO.workingCache})`); // the equal-budget control's grid
      expect(out.join("\n")).toMatch(/\| iterative_budget +\| 2 +\| 8 /);
      expect(err.filter((l) => l.startsWith("embeddings: "))).toEqual([expect.stringMatching(/^embeddings: 0 computed, /)]);
      expect(err.join("\n")).not.toMatch(/were not in .* and were computed/);
      expect(out.join("\n")).toMatch(/\| error_fix_memory +\| 2 +\| 8 /);
      expect(snapshot(PEERS_DEMO.reportDir, [PEERS_REPLAY_CACHE])).toEqual(before);
      expect(statSync(join(PEERS_DEMO.reportDir, "tables", "peers.md")).size).toBeGreaterThan(0);
    },
    budget(180_000),
  );
});

// Tests `merit report` with peer methods (lib/cli/report.ts, lib/analysis/table-peers.ts): runs that
// hold peers (methods with a citation) get tables/peers.* and figures/peers-pareto.*, recorded in
// manifest.json; runs without peers get neither; --peers names the family itself and is refused
// without a reference or when it names the reference.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-peers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// spider, 3 queries: q0 initially correct; merit repairs q1 and q2, each peer one of them, iterative none
const REPAIRED: Record<string, string[]> = { merit: ["1", "2"], reasoning_bank: ["1"], dynamic_cheatsheet: ["2"], iterative: [] };
for (const [method, repaired] of Object.entries(REPAIRED)) {
  for (const seed of [0, 1]) {
    writeRunDir(join(root, method === "iterative" ? "base" : "with", `${method}-s${seed}`), [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
      ...["1", "2"].map((q) => (repaired.includes(q) ? repairTrajectory(q, 1, true, { method, stream_seed: seed }) : repairTrajectory(q, 3, false, { method, stream_seed: seed }))),
    ]);
  }
}
const sink = { out: () => {}, err: () => {} };

describe("merit report with peer methods", () => {
  it("writes the peers table and the Pareto figure when the runs hold peers", async () => {
    const dest = join(root, "out");
    expect(await reportCommand.run([join(root, "with"), join(root, "base"), "--out", dest, "--resamples", "100"], sink)).toBe(0);
    const md = readFileSync(join(dest, "tables", "peers.md"), "utf8");
    expect(md).toContain("Peer memory methods on the same streams");
    expect(md).toMatch(/\| Spider \| MERIT \| \*\*100\.00 ± 0\.00\*\* \| — \|/);
    // Δ = MERIT − peer (Table 2's sign for the pair), then the peer against Iterative
    expect(md).toMatch(/\| Spider \| reasoning_bank \| <u>66\.67 ± 0\.00<\/u> \| \+33\.33 \|/);
    expect(md).toMatch(/\| Spider \| dynamic_cheatsheet \| <u>66\.67 ± 0\.00<\/u> \| \+33\.33 \|/);
    expect(md).toContain("| Δ method − Iterative (pp) |");
    expect(md).not.toMatch(/\| Spider \| Iterative \|/); // a baseline, not a peer row
    expect(md).toContain("ReasoningBank");
    expect(readFileSync(join(dest, "tables", "peers.csv"), "utf8").split("\n")[0]).toContain("p (Holm)");
    expect(existsSync(join(dest, "tables", "peers.tex"))).toBe(true);
    const svg = readFileSync(join(dest, "figures", "peers-pareto.svg"), "utf8");
    expect(svg).toContain("LLM tokens per query");
    expect(svg).toContain("Iterative"); // every method of the runs is drawn
    expect(readFileSync(join(dest, "figures", "peers-pareto.png")).subarray(1, 4).toString()).toBe("PNG");
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).peers).toEqual({ reference: "merit", peers: ["reasoning_bank", "dynamic_cheatsheet"] });
  });
  it("--curves covers the peers and the reference beside the paper's methods (the learning curves and the order-sensitivity table)", async () => {
    const dest = join(root, "curves");
    expect(await reportCommand.run([join(root, "with"), join(root, "base"), "--out", dest, "--resamples", "50", "--curves", "--curve-resamples", "20", "--no-figures"], sink)).toBe(0);
    const methods = (file: string, col: number) => [...new Set(readFileSync(file, "utf8").trim().split("\n").slice(1).map((l) => l.split(",")[col]))];
    // the paper's methods first (Iterative, MERIT), then every other method of the runs (issue 39 §3: the report shows each method, alphabetically after the paper's)
    expect(methods(join(dest, "figures", "learning-curves.csv"), 1)).toEqual(["Iterative", "MERIT", "dynamic_cheatsheet", "reasoning_bank"]);
    expect(methods(join(dest, "tables", "order-sensitivity.csv"), 1)).toEqual(["Iterative", "MERIT", "dynamic_cheatsheet", "reasoning_bank"]);
    // without peers (no peer run, no --peers) the curves keep the paper's methods only
    const none = join(root, "curves-none");
    expect(await reportCommand.run([join(root, "with", "merit-s0"), join(root, "with", "merit-s1"), join(root, "base"), "--out", none, "--resamples", "50", "--curves", "--curve-resamples", "20", "--no-figures"], sink)).toBe(0);
    expect(methods(join(none, "figures", "learning-curves.csv"), 1)).toEqual(["Iterative", "MERIT"]);
    // --peers naming a method --methods leaves out adds it to the curves too
    const flag = join(root, "curves-flag");
    expect(await reportCommand.run([join(root, "with"), join(root, "base"), "--out", flag, "--resamples", "50", "--curves", "--curve-resamples", "20", "--no-figures", "--methods", "iterative,merit", "--peers", "dynamic_cheatsheet"], sink)).toBe(0);
    expect(methods(join(flag, "figures", "learning-curves.csv"), 1)).toEqual(["Iterative", "MERIT", "dynamic_cheatsheet"]);
  });
  it("writes neither without peers", async () => {
    const dest = join(root, "none");
    expect(await reportCommand.run([join(root, "with", "merit-s0"), join(root, "with", "merit-s1"), join(root, "base"), "--out", dest, "--resamples", "50"], sink)).toBe(0);
    expect(existsSync(join(dest, "tables", "peers.md"))).toBe(false);
    expect(existsSync(join(dest, "figures", "peers-pareto.svg"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).peers).toBeUndefined();
  });
  it("--peers names the family (any methods of the runs); refused without a reference or naming it", async () => {
    const dest = join(root, "flag");
    expect(await reportCommand.run([join(root, "with"), join(root, "base"), "--out", dest, "--resamples", "50", "--no-figures", "--peers", "iterative,dynamic_cheatsheet"], sink)).toBe(0);
    const rows = readFileSync(join(dest, "tables", "peers.csv"), "utf8").trim().split("\n").slice(1).map((l) => l.split(",")[1]);
    expect(rows).toEqual(["MERIT", "Iterative", "dynamic_cheatsheet"]); // the paper's display names
    await expect(reportCommand.run([join(root, "with"), "--out", join(root, "x"), "--peers", "merit,dynamic_cheatsheet"], sink)).rejects.toThrow(/names the --reference method merit/);
    await expect(reportCommand.run([join(root, "with", "dynamic_cheatsheet-s0"), join(root, "base"), "--out", join(root, "y"), "--peers", "dynamic_cheatsheet"], sink)).rejects.toThrow(/--peers needs --reference/);
    await expect(reportCommand.run([join(root, "with"), "--out", join(root, "z"), "--peers", "awm"], sink)).rejects.toThrow(/no run of method "awm"/);
  });
});

// Tests lib/cli/report.ts additions: --runs lists and globs, refusal of misaligned runs, the deterministic results manifest, the two new figures, and --gold-labels (Table 5) by hand.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { sha256Hex } from "../../lib/hash.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-runs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// spider, 3 queries: q0 initially correct; merit repairs q1 and q2, iterative repairs q1 only; merit has memory.
for (const method of ["merit", "iterative"]) {
  for (const seed of [0, 1, 2]) {
    const trajectories = [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
      repairTrajectory("1", 1, true, { method, stream_seed: seed }),
      method === "merit" ? repairTrajectory("2", 2, true, { method, stream_seed: seed }) : repairTrajectory("2", 7, false, { method, stream_seed: seed }),
    ];
    const memory = method === "merit" ? [{ polarity: "positive" as const, position: seed }, { polarity: "negative" as const, position: 2 }] : undefined;
    writeRunDir(join(root, "runs", `${method}-s${seed}`), trajectories, { memory });
  }
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, sink: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}
const runs = join(root, "runs");

describe("merit report --runs", () => {
  it("accepts globs, comma lists, repeats and positionals, and writes the new figures and manifest", async () => {
    const { out, sink } = io();
    const dest = join(root, "report-a");
    const argv = [join(runs, "iterative-s0"), "--runs", `${runs}/merit-s*,${runs}/iterative-s1`, "--runs", `${runs}/iterative-s[2]`, "--runs", join(runs, "iterative-s0"), "--out", dest, "--resamples", "200"];
    expect(await reportCommand.run(argv, sink)).toBe(0);
    expect(JSON.parse(out.at(-1)!).runs).toBe(6);
    for (const name of ["failure-composition", "memory-growth"]) {
      expect(readFileSync(join(dest, "figures", `${name}.svg`), "utf8")).toContain("<text");
      expect(readFileSync(join(dest, "figures", `${name}.png`)).subarray(1, 4).toString()).toBe("PNG");
    }
    const manifest = JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8"));
    expect(manifest.bootstrap).toEqual({ resamples: 200, seed: 0, interval: "percentile", level: 0.95 });
    expect(manifest.max_repair_steps).toBe(7);
    expect(manifest.runs).toHaveLength(6);
    expect(manifest.runs[0]).toMatchObject({ method: "iterative", stream_seed: 0, cache_hash: "cache-spider", dataset_checksum: "data-spider", database_manifest_hash: "db-spider" });
    expect(manifest.runs[0].trajectories_sha256).toBe(sha256Hex(readFileSync(join(runs, "iterative-s0", "trajectories.jsonl"))));
  });
  it("writes a byte-identical manifest for the same runs given in another order", async () => {
    const a = join(root, "report-b");
    const b = join(root, "report-c");
    await reportCommand.run([runs, "--out", a, "--resamples", "200", "--no-figures"], io().sink);
    await reportCommand.run(["--runs", `${runs}/merit-*,${runs}/iterative-*`, "--out", b, "--resamples", "200", "--no-figures"], io().sink);
    expect(readFileSync(join(b, "manifest.json"), "utf8")).toBe(readFileSync(join(a, "manifest.json"), "utf8"));
    expect(readFileSync(join(a, "manifest.json"), "utf8")).not.toMatch(/202\d-/); // no timestamps
  });
});

describe("merit report refuses misaligned runs", () => {
  const variant = (name: string, over: Parameters<typeof writeRunDir>[2]) => {
    const t = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method: "reflexion", stream_seed: 0 })];
    return writeRunDir(join(root, "bad", name), t, over);
  };
  const refuse = (dir: string) => reportCommand.run([join(runs, "merit-s0"), dir, "--out", join(root, "x"), "--resamples", "10"], io().sink);
  it("a different initial cache", async () => {
    const dir = variant("cache", { cache_hash: "cache-other" });
    await expect(refuse(dir)).rejects.toThrow(`runs differ in initial cache (cache_hash): ${join(runs, "merit-s0")} (merit, seed 0) has cache-spider but ${dir} (reflexion, seed 0) has cache-other`);
  });
  it("different data hashes", async () => {
    await expect(refuse(variant("data", { dataset_checksum: "data-other" }))).rejects.toThrow(/differ in dataset checksum \(examples and tables files\): .*merit-s0 \(merit, seed 0\) has data-spider but .*data \(reflexion, seed 0\) has data-other/);
    await expect(refuse(variant("db", { database_manifest_hash: "db-other" }))).rejects.toThrow(/differ in database manifest hash: .* has db-spider but .*db \(reflexion, seed 0\) has db-other/);
  });
  it("a different K", async () => {
    await expect(refuse(variant("k", { max_repair_steps: 3 }))).rejects.toThrow(/differ in K \(max_repair_steps in config\.json\): .*merit-s0 \(merit, seed 0\) has 7 but .*k \(reflexion, seed 0\) has 3; run every method with the same max_repair_steps/);
  });
  it("unfinished runs and runs without a manifest", async () => {
    await expect(refuse(variant("running", { status: "running" }))).rejects.toThrow(/status "running".*finish \(resume\) the run/);
    const bare = variant("bare", {});
    rmSync(join(bare, "manifest.json"));
    await expect(refuse(bare)).rejects.toThrow(/manifest\.json.*is missing/);
  });
  it("a glob that matches nothing", async () => {
    await expect(reportCommand.run(["--runs", `${runs}/nothing-*`, "--out", join(root, "x")], io().sink)).rejects.toThrow(/matches no file or folder/);
  });
});

describe("merit report --gold-labels", () => {
  it("computes Table 5 accuracy, macro-F1 and the confusion matrix from the labelled CSV", async () => {
    // 150 initially failed queries (q0–q149), one iterative run.
    const trajectories = Array.from({ length: 150 }, (_, i) => repairTrajectory(String(i), 1, false));
    const dir = writeRunDir(join(root, "gold", "iterative-s0"), trajectories);
    // predicted / gold: q0–99 Syntax/Syntax; q100–129 Schema Linking/Schema Linking;
    // q130–139 Schema Linking/Syntax; q140–149 Unknown/Result Mismatch. q0–49 get a second annotator.
    const label = (i: number) => (i < 100 ? ["Syntax", "Syntax"] : i < 130 ? ["Schema Linking", "Schema Linking"] : i < 140 ? ["Schema Linking", "Syntax"] : ["Unknown", "Result Mismatch"]);
    const row = (i: number, annotator: string) => [String(i), "db", `"Q ${i}, ""quoted"""`, `"SELECT a,\nb FROM t${i}"`, "", ...label(i), annotator].join(",");
    const csv = [
      "query_id,db_id,question,predicted_sql,error_message,predicted_type,gold_type,annotator_id",
      ...Array.from({ length: 150 }, (_, i) => row(i, "ann1")),
      ...Array.from({ length: 50 }, (_, i) => row(i, "ann2")),
    ].join("\r\n");
    const file = join(root, "gold", "cases.csv");
    writeFileSync(file, csv);
    const dest = join(root, "gold-report");
    expect(await reportCommand.run([dir, "--gold-labels", file, "--out", dest, "--no-figures"], io().sink)).toBe(0);
    const t5 = readFileSync(join(dest, "tables", "table5.csv"), "utf8");
    // accuracy = (100 + 30) / 150 = 86.67 %
    const spider = t5.split("\n")[1].split(",");
    // paper layout: Acc. (%) and Macro-F1 columns of the dataset row; the CSV adds initial failures and annotated cases
    expect(spider.slice(4, 9)).toEqual(["86.67", "0.452", "86.67", "150", "150"]); // issue 20 §10: Acc., plain (%) beside Acc. (one stratum: weighted = plain)
    // F1: Schema Linking P 30/40, R 30/30 → 6/7; Syntax P 100/100, R 100/110 → 20/21; Result Mismatch 0; Unknown 0
    // macro-F1 = (6/7 + 20/21) / 4 = 38/84 = 0.4524
    expect(readFileSync(join(dest, "tables", "table5-confusion-spider.csv"), "utf8")).toBe(
      [
        "Gold \\ Predicted,Schema Linking,Syntax,Result Mismatch,Unknown,Total",
        "Schema Linking,30,0,0,0,30",
        "Syntax,10,100,0,0,110",
        "Result Mismatch,0,0,0,10,10",
        "Unknown,0,0,0,0,0",
        "Total,40,100,0,10,150",
      ].join("\n") + "\n",
    );
    const manifest = JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8"));
    expect(manifest.gold_labels_sha256).toBe(sha256Hex(readFileSync(file)));
  });
  it("refuses unlabelled rows and --annotations together with --gold-labels", async () => {
    const dir = join(root, "gold", "iterative-s0");
    const file = join(root, "gold", "unlabelled.csv");
    writeFileSync(file, "query_id,db_id,question,predicted_sql,error_message,predicted_type,gold_type,annotator_id\n0,db,q,SELECT 1,,Syntax,,\n");
    await expect(reportCommand.run([dir, "--gold-labels", file, "--out", join(root, "x"), "--no-figures"], io().sink)).rejects.toThrow(/record 2 \(query 0\) has an empty gold_type/);
    await expect(reportCommand.run([dir, "--gold-labels", file, "--annotations", file, "--out", join(root, "x")], io().sink)).rejects.toThrow(/not both/);
    expect(existsSync(join(root, "x", "manifest.json"))).toBe(false);
  });
});

// Tests the built-in peer memory methods of lib/methods/peers/ (METHOD.md §13.1–13.4): reasoning_bank,
// reasoning_bank_oracle, dynamic_cheatsheet, dynamic_cheatsheet_rs and awm, each on the scripted
// five-query Spider scenario (test/helpers/scripted-scenario.ts: 426 correct, A fails and is repaired
// at step 3, B is never repaired in 7, C is repaired at step 1, 278 correct). A scripted chat double
// answers the methods' own prompts (judge, distill, curate, synthesize, induce) with fixed text and
// passes repairs to the scenario's ScriptedBackend. Each test shows what a success and a failure store,
// what reaches the repair prompt (only from earlier positions), that the call kinds the trajectories
// count stay within what the method declares, and that `merit audit` finds the run clean; the
// stateful ones (a sheet, a workflow set, a synthesis reused within an episode) resume from a kill to
// the same bytes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandIO } from "../../lib/cli/command.ts";
import { methodsCommand } from "../../lib/cli/methods.ts";
import { auditRun } from "../../lib/experiment/audit.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { BUILTIN_CALL_KINDS, getMethod, methodTable, sourcesTable } from "../../lib/methods/index.ts";
import { capText } from "../../lib/methods/peers/episode-text.ts";
import { DC_SHEET_CAP, parseSheet } from "../../lib/methods/peers/dynamic-cheatsheet.ts";
import { parseItems, parseVerdict } from "../../lib/methods/peers/reasoning-bank.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { judgeAgreementTable } from "../../lib/analysis/table-judge.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, SCENARIO_LIMIT, type ScenarioFixture, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** Answers the peer methods' prompts with fixed text (by the prompt's first line); repairs go to `repairs`. */
class PeerDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "peer-double", modelHash: "none", params: {} };
  readonly prompts: string[] = [];
  readonly repairs: ChatBackend;
  /** The question the judge wrongly calls a failure. */
  readonly misjudged: string;
  /** The call (1-based) that throws, as a killed run would stop. */
  readonly failAt: number;
  constructor(
    repairs: ChatBackend,
    misjudged: string,
    failAt = Infinity,
  ) {
    this.repairs = repairs;
    this.misjudged = misjudged;
    this.failAt = failAt;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (this.prompts.length + 1 >= this.failAt) throw new Error("scripted crash");
    this.prompts.push(request.prompt);
    const p = request.prompt;
    const question = /^Question: (.*)$/m.exec(p)?.[1] ?? "";
    let text: string;
    switch (p.split("\n")[0]) {
      case "RB-JUDGE v2":
        // The judge sees no status: the double calls a query that ran a success, but for B's
        // too-few-rows answers (WHERE id <= k) and the question it misjudges; it reasons first.
        text = `<reasoning>checked the rows</reasoning>${p.includes("Result (first rows") && !/WHERE id <= \d/.test(p) && question !== this.misjudged ? "<verdict>success</verdict>" : "<verdict>failure</verdict>"}`;
        break;
      case "RB-DISTILL v1":
        text = p.includes("SUCCEEDED")
          ? `<item><title>Read the schema</title><description>Any lookup.</description><content>Names came from the schema for: ${question}</content></item><item><title>Join keys</title><description>Joins.</description><content>Join on declared keys.</content></item>`
          : `<item><title>Finish the query</title><description>Unfinished SQL.</description><content>A query failed for: ${question}</content></item>`;
        break;
      case "DC-CURATE v1": {
        const previous = /Current cheatsheet:\n([\s\S]*?)\n\nQuestion: /.exec(p)![1];
        text = `<cheatsheet>${previous === "(empty)" ? "" : `${previous}\n`}- seen: ${question}</cheatsheet>`;
        break;
      }
      case "DCRS-SYNTHESIZE v2": {
        // The sheet carries the previous one forward and adds a line for this question.
        const target = /New question:\nQuestion: (.*)$/m.exec(p)![1];
        const n = (p.match(/^\[\d+\]$/gm) ?? []).length;
        const previous = /Previous cheatsheet:\n([\s\S]*?)\n\nEarlier experiences:/.exec(p)![1];
        text = `<cheatsheet>${previous === "(empty)" ? "" : `${previous}\n`}- advice from ${n} experiences for: ${target}</cheatsheet>`;
        break;
      }
      case "AWM-INDUCE v2": {
        const n = (p.match(/^\[\d+\] Question: /gm) ?? []).length;
        text = `<workflows>Workflow induced from ${n} successes\n1. find the tables\n2. write the query</workflows>`;
        break;
      }
      default:
        return this.repairs.generate(request);
    }
    return { text, promptTokens: p.split(/\s+/).length, outputTokens: text.split(/\s+/).length, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("peers-a");
}, budget(120_000));
afterAll(() => closeScenario(fx));

const questionOf = (id: string) => fx.dataset.examples.find((e) => e.id === id)!.question;

/** Runs `method` on the scenario; returns the run's files, by query id, and the double. */
async function run(method: string, opts: { dir?: string; failAt?: number; resume?: boolean } = {}) {
  const dir = opts.dir ?? join(fx.root, method);
  const double = new PeerDouble(new ScriptedBackend(scenarioScript(fx.dataset)), questionOf(C), opts.failAt);
  await runScenarioWith(fx, method, dir, double, { resume: opts.resume });
  const files = readRun(dir);
  expect(files.trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
  const byId = new Map(files.trajectories.map((t) => [t.query_id, t]));
  return { dir, double, ...files, byId, repairPrompts: (id: string) => files.prompts.filter((p) => p.kind === "repair" && p.query_id === id).map((p) => p.prompt) };
}

/** The checks every peer run passes: declared kinds only, each within its `most`, accounting per call, a clean audit. */
function checkRun(method: string, r: Awaited<ReturnType<typeof run>>, expected: Record<string, Record<string, number>>) {
  const calls = getMethod(method).hooks.calls ?? {};
  for (const t of r.trajectories) {
    const extra = t.call_kinds.filter((k) => !BUILTIN_CALL_KINDS.includes(k));
    const counts = Object.fromEntries(Object.keys(calls).map((k) => [k, extra.filter((e) => e === k).length]));
    expect(extra.every((k) => k in calls), `${t.query_id}: ${extra.join(",")}`).toBe(true);
    for (const [k, n] of Object.entries(counts)) expect(n, `${t.query_id} ${k}`).toBeLessThanOrEqual(calls[k].most as number);
    expect(counts, t.query_id).toEqual(expected[t.query_id]);
    expect(t.accounting.llm_calls).toBe(t.call_kinds.length);
    for (const n of t.memory_writes ?? []) expect([n.source_query_id, n.source_stream_position]).toEqual([t.query_id, t.stream_position]);
  }
  for (const rec of r.retrievals) expect(rec.source_stream_positions.every((s) => s < r.byId.get(rec.query_id)!.stream_position)).toBe(true);
  expect(r.prompts.filter((p) => !["repair", "reflection"].includes(p.kind)).length).toBe(r.trajectories.reduce((n, t) => n + t.call_kinds.filter((k) => !BUILTIN_CALL_KINDS.includes(k)).length, 0));
  expect(auditRun(r.dir, fx.dataset).violations).toEqual([]);
}

const each = (counts: Record<string, number>, except: Record<string, Record<string, number>> = {}) => Object.fromEntries(SCENARIO_IDS.map((id) => [id, except[id] ?? counts]));
const writes = (t: Trajectory | undefined) => t!.memory_writes ?? [];

describe("the peer methods are registered after the paper's, with their source and ground-truth need", () => {
  it("lists them in merit methods: hooks and calls in the method table, source and ground truth in the sources table and --json", async () => {
    const row = (name: string) => methodTable().find((l) => l.startsWith(`| \`${name}\` |`))!;
    expect(row("reasoning_bank")).toContain("memory:reasoning_bank(embedded) + calls(distill<=1, judge<=1)");
    expect(row("reasoning_bank_oracle")).toContain("memory:reasoning_bank_oracle(embedded) + calls(distill<=1)");
    expect(row("dynamic_cheatsheet")).toContain("memory:dynamic_cheatsheet + calls(curate<=1)");
    expect(row("dynamic_cheatsheet_rs")).toContain("memory:dynamic_cheatsheet_rs(embedded) + calls(synthesize<=1/repair_episode)");
    expect(row("awm")).toContain("memory:awm + calls(induce<=1/success)");
    const sources = sourcesTable();
    expect(sources).toContain("| `reasoning_bank` | ReasoningBank: Ouyang et al. 2025, arXiv 2509.25140 | agent's view only |");
    expect(sources).toContain("| `reasoning_bank_oracle` | ReasoningBank: Ouyang et al. 2025, arXiv 2509.25140 | oracle verdict (ground truth) |");
    expect(sources).toContain("| `dynamic_cheatsheet_rs` | Dynamic Cheatsheet: Suzgun et al. 2025, arXiv 2504.07952 | agent's view only |");
    expect(sources).toContain("| `awm` | Agent Workflow Memory: Wang et al. 2024, arXiv 2409.07429 | oracle verdict (ground truth) |");
    expect(sources.some((l) => l.startsWith("| `merit`"))).toBe(false);
    const out: string[] = [];
    const io: CommandIO = { out: (l) => out.push(...l.split("\n")), err: () => {} };
    expect(await methodsCommand.run([], io)).toBe(0);
    expect(out).toContain("| `dynamic_cheatsheet` | Dynamic Cheatsheet: Suzgun et al. 2025, arXiv 2504.07952 | agent's view only |");
    out.length = 0;
    expect(await methodsCommand.run(["--json"], io)).toBe(0);
    const all = JSON.parse(out.join("\n"));
    expect(all.awm).toMatchObject({ citation: "Agent Workflow Memory: Wang et al. 2024, arXiv 2409.07429", sight: "oracle", ground_truth: true });
    expect(all.reasoning_bank).toMatchObject({ sight: "agent", ground_truth: false });
    expect(all.merit.citation).toBeUndefined();
  });

  it("parses the model's answers strictly and caps sheets deterministically by whole lines", () => {
    expect(parseVerdict("<verdict> Success </verdict>")).toBe(true);
    expect(parseVerdict("I think it failed")).toBe(false);
    const item = "<item><title>T</title><description>D</description><content>C</content></item>";
    expect(parseItems(`${item}<item><title></title><content>x</content></item>${item}${item}${item}`)).toHaveLength(3);
    expect(parseSheet("no sheet")).toBeNull();
    const long = Array.from({ length: 300 }, (_, i) => `- line ${i} of the sheet`).join("\n");
    const sheet = parseSheet(`<cheatsheet>${long}</cheatsheet>`)!;
    expect(sheet.length).toBeLessThanOrEqual(DC_SHEET_CAP);
    expect(long.startsWith(sheet) && long[sheet.length] === "\n").toBe(true);
    expect(capText("x".repeat(50), 10)).toBe("x".repeat(10));
  });
});

describe("reasoning_bank", () => {
  it("judges each episode, distills items from the judged success or failure, shows the items of the top-1 similar earlier question", async () => {
    const r = await run("reasoning_bank");
    checkRun("reasoning_bank", r, each({ judge: 1, distill: 1 }));
    for (const t of r.trajectories) expect(t.call_kinds.slice(-2)).toEqual(["judge", "distill"]);
    // One note per episode holding its items (the original's one record per task): a success (judged
    // so) stores two positive items, a failure one negative; C was repaired but the judge (the double)
    // calls it a failure, so its note is negative: the judge, not the oracle, decides.
    expect(writes(r.byId.get("426")).map((n) => n.polarity)).toEqual(["positive"]);
    expect((writes(r.byId.get("426"))[0].data as { items: unknown[] }).items).toHaveLength(2);
    expect(writes(r.byId.get("426"))[0].text).toBe(`Read the schema — Any lookup.\nNames came from the schema for: ${questionOf("426")}\n\nJoin keys — Joins.\nJoin on declared keys.`);
    expect(writes(r.byId.get(B)).map((n) => [n.polarity, n.kind])).toEqual([["negative", "memory_items"]]);
    expect(writes(r.byId.get(B))[0].text).toBe(`Finish the query — Unfinished SQL.\nA query failed for: ${questionOf(B)}`);
    expect(r.byId.get(C)!.final_correct).toBe(true);
    expect(writes(r.byId.get(C)).map((n) => n.polarity)).toEqual(["negative"]);
    expect(writes(r.byId.get(C))[0].data).toMatchObject({ judged_success: false, verdict_from: "judge" });
    // Every episode's verdict reaches its trajectory (judged_success), beside the oracle's verdict of
    // the final attempt: C is a false reject, B a true reject, the rest true accepts; the report's
    // judge-agreement table counts them so.
    expect(r.trajectories.map((t) => [t.query_id, t.judged_success, t.final_correct])).toEqual(r.trajectories.map((t) => [t.query_id, t.query_id !== B && t.query_id !== C, t.query_id !== B]));
    const table = judgeAgreementTable([summarizeRun(r.trajectories)])!;
    expect(table.id).toBe("judge-agreement");
    expect(table.data).toEqual([expect.objectContaining({ method: "reasoning_bank", episodes: 5, tp: 3, fp: 0, fn: 1, tn: 1, agreement: 0.8, sensitivity: 0.75, specificity: 1 })]);
    // The judge sees the question, the schema, the final SQL and its rows: never a status, never the gold.
    const judge = r.prompts.find((p) => p.kind === "judge" && p.query_id === B)!.prompt;
    expect(judge).toContain(`Question: ${questionOf(B)}`);
    expect(judge).toContain("Last SQL query: SELECT Title FROM Cartoon WHERE id <= 7 ORDER BY Title");
    expect(judge).toContain("Result (first rows, one JSON array per row):");
    expect(judge).not.toMatch(/DENOTATION_MISMATCH|CORRECT|status/);
    // Before each repair: the items of one earlier episode (A at position 1: those of 426).
    for (const rec of r.retrievals) expect(new Set(rec.retrieved_entry_ids.map((id) => r.trajectories.flatMap(writes).find((n) => n.note_id === id)!.source_episode_id)).size).toBe(1);
    expect(r.retrievals.filter((x) => x.query_id === A).map((x) => x.retrieved_entry_ids)).toEqual([1, 2, 3].map(() => writes(r.byId.get("426")).map((n) => n.note_id)));
    for (const rec of r.retrievals) expect(rec.retrieved_entry_ids).toHaveLength(1);
    const prompt = r.repairPrompts(A)[0];
    expect(prompt).toContain("MEMORY ITEMS FROM A SIMILAR EARLIER QUESTION:\n[memory_items 1]\nNote ID: ");
    expect(prompt).toContain(`Names came from the schema for: ${questionOf("426")}`);
    // Embeddings: the episode's question once when its note is stored (not once per item), the question at each repair.
    for (const t of r.trajectories) expect(t.accounting.embedding_calls).toBe(writes(t).length + (t.stream_position > 0 ? t.repair_steps : 0));
  }, budget(120_000));
});

describe("reasoning_bank_oracle", () => {
  it("takes the outcome from the oracle's verdict (its declared sight): no judge call, C's items positive", async () => {
    const r = await run("reasoning_bank_oracle");
    checkRun("reasoning_bank_oracle", r, each({ distill: 1 }));
    expect(r.trajectories.every((t) => !t.call_kinds.includes("judge"))).toBe(true);
    expect(writes(r.byId.get(C)).map((n) => n.polarity)).toEqual(["positive"]);
    expect((writes(r.byId.get(C))[0].data as { items: unknown[] }).items).toHaveLength(2);
    expect(writes(r.byId.get(C))[0].data).toMatchObject({ judged_success: true, verdict_from: "oracle" });
    // Its verdict is the oracle's, not a judge's: no judged_success, so no judge-agreement row.
    expect(r.trajectories.every((t) => t.judged_success === undefined)).toBe(true);
    expect(judgeAgreementTable([summarizeRun(r.trajectories)])).toBeNull();
    expect(writes(r.byId.get(B)).map((n) => n.polarity)).toEqual(["negative"]);
  }, budget(120_000));
});

describe("dynamic_cheatsheet (DC-Cu)", () => {
  it("rewrites one sheet at each episode end from the previous one, and shows the latest earlier sheet whole", async () => {
    const r = await run("dynamic_cheatsheet");
    checkRun("dynamic_cheatsheet", r, each({ curate: 1 }));
    // Each episode (success or failure) writes one sheet that extends the previous one.
    const sheets = SCENARIO_IDS.map((id) => writes(r.byId.get(id)));
    expect(sheets.map((s) => s.map((n) => n.kind))).toEqual(SCENARIO_IDS.map(() => ["cheatsheet"]));
    SCENARIO_IDS.forEach((id, i) => {
      expect(sheets[i][0].text).toBe(SCENARIO_IDS.slice(0, i + 1).map((q) => `- seen: ${questionOf(q)}`).join("\n"));
      expect(sheets[i][0].data).toMatchObject({ previous_note_id: i === 0 ? null : sheets[i - 1][0].note_id });
    });
    // The curator reads the previous sheet (the write hook's eligible view) and the episode.
    const curate = r.prompts.filter((p) => p.kind === "curate");
    expect(curate[0].prompt).toContain("Current cheatsheet:\n(empty)");
    expect(curate[3].prompt).toContain(`Current cheatsheet:\n${sheets[2][0].text}\n`);
    expect(curate[2].prompt).toContain("(repair 7) SELECT Title FROM Cartoon WHERE id <= 7 ORDER BY Title");
    // Before each repair: the latest earlier sheet — A sees 426's, C sees B's (position 2).
    expect(r.retrievals.map((x) => x.retrieved_entry_ids)).toEqual([...[1, 2, 3].map(() => [sheets[0][0].note_id]), ...Array.from({ length: 7 }, () => [sheets[1][0].note_id]), [sheets[2][0].note_id]]);
    expect(r.repairPrompts(C)[0]).toContain(`CHEATSHEET FROM EARLIER EPISODES:\n[cheatsheet 1]\nNote ID: ${sheets[2][0].note_id}\n${sheets[2][0].text}`);
    for (const t of r.trajectories) expect(t.accounting.embedding_calls).toBe(0);
  }, budget(120_000));
});

describe("dynamic_cheatsheet_rs (DC-RS)", () => {
  it("stores each episode's experience, synthesizes a sheet from the top 3 once per episode and shows it before every repair", async () => {
    const r = await run("dynamic_cheatsheet_rs");
    // One synthesize call per repaired episode (at its first repair), none without repairs.
    checkRun("dynamic_cheatsheet_rs", r, each({ synthesize: 0 }, { [A]: { synthesize: 1 }, [B]: { synthesize: 1 }, [C]: { synthesize: 1 } }));
    const b = writes(r.byId.get(B));
    expect(b.map((n) => [n.kind, n.polarity, n.key])).toEqual([["experience", "negative", questionOf(B)]]);
    expect(b[0].text).toContain("Final SQL: SELECT Title FROM Cartoon WHERE id <= 7 ORDER BY Title\nOutcome: status ");
    expect(writes(r.byId.get(A)).map((n) => n.polarity)).toEqual(["positive"]);
    // The synthesis reads the picked earlier experiences: 1 for A (position 1), 3 of 3 for C (position 3).
    const synth = (id: string) => r.prompts.find((p) => p.kind === "synthesize" && p.query_id === id)!.prompt;
    expect(synth(A)).toContain(`[1]\nQuestion: ${questionOf("426")}`);
    expect(synth(A)).not.toContain("[2]\n");
    expect(synth(C)).toContain("[3]\n");
    expect(r.retrievals.filter((x) => x.query_id === C)[0].retrieved_entry_ids).toHaveLength(3);
    // The synthesis carries the previous sheet (issue 37 §1): A's reads none, B's reads A's, C's reads B's.
    const sheetA = `- advice from 1 experiences for: ${questionOf(A)}`;
    const sheetB = `${sheetA}\n- advice from 2 experiences for: ${questionOf(B)}`;
    expect(synth(A)).toContain("Previous cheatsheet:\n(empty)\n");
    expect(synth(B)).toContain(`Previous cheatsheet:\n${sheetA}\n\nEarlier experiences:`);
    expect(synth(C)).toContain(`Previous cheatsheet:\n${sheetB}\n\nEarlier experiences:`);
    // The sheet an episode synthesized is kept in its experience note; an episode without repairs keeps none.
    expect(writes(r.byId.get(A))[0].data).toMatchObject({ sheet: sheetA });
    expect(writes(r.byId.get(B))[0].data).toMatchObject({ sheet: sheetB });
    expect(writes(r.byId.get("426"))[0].data).not.toHaveProperty("sheet");
    // Every repair of B shows the same synthesized sheet, not the raw experiences (no Note ID).
    const prompts = r.repairPrompts(B);
    expect(prompts).toHaveLength(7);
    for (const p of prompts) {
      expect(p).toContain(`CHEATSHEET SYNTHESIZED FROM SIMILAR EARLIER EPISODES:\n${sheetB}`);
      expect(p).not.toContain("Note ID:");
    }
    // Embeddings: the stored experience, and the question at each repair.
    for (const t of r.trajectories) expect(t.accounting.embedding_calls).toBe(1 + t.retrieved_entry_ids.length);
  }, budget(120_000));
});

describe("awm", () => {
  it("re-induces the workflow set over the successes so far after each success; a failure writes nothing and makes no call", async () => {
    const r = await run("awm");
    checkRun("awm", r, each({ induce: 1 }, { [B]: { induce: 0 } }));
    expect(writes(r.byId.get(B))).toEqual([]);
    const sets = ["426", A, C, "278"].map((id) => writes(r.byId.get(id)));
    sets.forEach((s, i) => {
      expect(s.map((n) => [n.kind, n.polarity])).toEqual([["workflows", "positive"]]);
      expect(s[0].text).toBe(`Workflow induced from ${i + 1} successes\n1. find the tables\n2. write the query`);
      expect((s[0].data as { successes: unknown[] }).successes).toHaveLength(i + 1);
    });
    // A's success carries its final (repaired) SQL into the next induction.
    expect((sets[1][0].data as { successes: { sql: string }[] }).successes[1].sql).toBe(scenarioScript(fx.dataset).get(questionOf(A))![2]);
    // ...and its repair path (issue 37 §1): the three failed attempts with their feedback, then the fix.
    const induceA = r.prompts.find((p) => p.kind === "induce" && p.query_id === A)!.prompt;
    const pathA = r.byId.get(A)!;
    expect(pathA.repair_steps).toBe(3);
    expect(induceA).toMatch(/\[2\] Question: .*\nDatabase: .*\nFailed attempt 1: .*\n  -> status \w+.*\nFailed attempt 2: .*\n  -> status .*\nFailed attempt 3: .*\n  -> status .*\nCorrect SQL: /);
    expect((sets[1][0].data as { successes: { failed?: unknown[] }[] }).successes[1].failed).toHaveLength(3);
    expect((sets[1][0].data as { successes: { failed?: unknown[] }[] }).successes[0].failed).toBeUndefined();
    // Before each repair: the latest earlier set — B and C both see A's (B wrote none).
    expect(r.retrievals.filter((x) => x.query_id !== A).every((x) => x.retrieved_entry_ids[0] === sets[1][0].note_id)).toBe(true);
    expect(r.repairPrompts(C)[0]).toContain(`WORKFLOWS INDUCED FROM EARLIER SUCCESSES:\n[workflows 1]\nNote ID: ${sets[1][0].note_id}\nWorkflow induced from 2 successes`);
  }, budget(120_000));
});

describe("a run killed mid-stream resumes to the same bytes (the memory state is rebuilt from the committed notes)", () => {
  for (const [method, failAt] of [["dynamic_cheatsheet", 9], ["dynamic_cheatsheet_rs", 9], ["awm", 9]] as const) {
    it(method, async () => {
      const whole = join(fx.root, `${method}-whole`);
      const killed = join(fx.root, `${method}-killed`);
      await run(method, { dir: whole });
      await expect(run(method, { dir: killed, failAt })).rejects.toThrow(/scripted crash/);
      expect(readRun(killed).trajectories.length).toBeLessThan(SCENARIO_LIMIT);
      await run(method, { dir: killed, resume: true });
      for (const file of ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json"]) {
        expect(readFileSync(join(killed, file), "utf8"), file).toBe(readFileSync(join(whole, file), "utf8"));
      }
    }, budget(120_000));
  }
});

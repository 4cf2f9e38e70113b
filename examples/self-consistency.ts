/**
 * Example plugin, how a repair candidate is produced (issue 36 §6): `self_consistency`, the
 * self-consistency baseline of Wang et al. (ICLR 2023, arXiv:2203.11171) with the execution-based
 * vote Text-to-SQL work uses for it (candidates grouped by the result they return, as in MBR-exec,
 * Shi et al. 2022, and DIN-SQL's self-consistency variant). No memory.
 *
 * At each repair step the kit makes its greedy repair call as for every method; the method's
 * `propose` hook then draws {@link SAMPLES} samples of the same repair prompt at temperature
 * {@link TEMPERATURE} (the declared sampled kind `sample`, `{ per_repair: 5 }` calls per episode, in
 * repair episodes only), executes every distinct candidate read-only through the run's executor
 * (rows or an error, never a verdict) and returns the SQL of the largest group of candidates that
 * return the same rows ({@link vote}). Candidates that do not execute do not vote; if none executes,
 * the greedy repair's SQL is scored.
 *
 * The vote is over the greedy repair PLUS the samples (6 candidates), the greedy one first, so a tie
 * goes to it — and with 5 distinct results and the greedy's, the method scores what `iterative`
 * scores. The paper votes over samples only; here the greedy call is one the kit makes at every
 * repair step anyway (the plan and the cost table count K repairs per episode), so it is a
 * candidate rather than a call made and thrown away.
 *
 * Each sample's seed comes from the run's stream seed, the query, the repair step, the kind and the
 * sample's number (lib/repair/proposal.ts `sampleSeed`), so a replay or a resumed run asks the same
 * calls, and the call cache keys each by temperature and seed. The samples are accounted as `sample` calls (trajectory
 * `call_kinds`, the cost-by-kind table), `merit grid --plan` counts 5·K of them per repair episode,
 * and every execution is counted in the attempt's `db_executions`.
 *
 * Run: `merit methods --plugin examples/self-consistency.ts`. Test: `npx vitest run examples/self-consistency.test.ts`.
 * @module
 */
import { registerMethod, type ExecutionView, type ProposeRequest, type ProposeTools } from "../lib/plugin.ts";

/** Samples per repair step. */
export const SAMPLES = 5;
/** Sampling temperature (Wang et al. sample at 0.5–0.7; 0.7 for the open models). */
export const TEMPERATURE = 0.7;

/** One candidate of a repair step: its SQL and what it returned. */
export interface Candidate {
  sql: string;
  execution: ExecutionView;
}

/** What makes two executions the same answer: the rows as a multiset (row order ignored), or null for one that did not run. */
export function answerKey(execution: ExecutionView): string | null {
  if (!execution.executed) return null;
  const rows = execution.rows.map((r) => JSON.stringify(r)).sort();
  return JSON.stringify([execution.truncated, rows]);
}

/**
 * The execution-majority vote: the SQL of the first candidate of the largest group of candidates with
 * the same answer (ties: the group whose first candidate comes first); candidates that did not run
 * do not vote; null when none ran.
 */
export function vote(candidates: readonly Candidate[]): string | null {
  const groups = new Map<string, { first: number; votes: number }>();
  candidates.forEach((c, i) => {
    const key = answerKey(c.execution);
    if (key === null || c.sql === "") return;
    const g = groups.get(key);
    if (g) g.votes += 1;
    else groups.set(key, { first: i, votes: 1 });
  });
  let best: { first: number; votes: number } | null = null;
  for (const g of groups.values()) if (best === null || g.votes > best.votes || (g.votes === best.votes && g.first < best.first)) best = g;
  return best === null ? null : candidates[best.first].sql;
}

/** Self-consistency at one repair step: the greedy repair and {@link SAMPLES} samples, executed once per distinct SQL, voted. */
export async function selfConsistent(request: ProposeRequest, tools: ProposeTools): Promise<string> {
  const sqls = [request.greedy];
  for (let i = 0; i < SAMPLES; i++) sqls.push(tools.extractSql((await tools.model.sample("sample", request.prompt)).text));
  const executed = new Map<string, ExecutionView>();
  const candidates: Candidate[] = [];
  for (const sql of sqls) {
    if (sql === "") {
      candidates.push({ sql, execution: { executed: false, rows: [], truncated: false, error: "no SQL" } });
      continue;
    }
    let execution = executed.get(sql);
    if (execution === undefined) {
      execution = await tools.execute(sql);
      executed.set(sql, execution);
    }
    candidates.push({ sql, execution });
  }
  return vote(candidates) ?? request.greedy;
}

registerMethod({
  name: "self_consistency",
  description: `self-consistency (Wang et al. 2023): the greedy repair and ${SAMPLES} samples at temperature ${TEMPERATURE} per repair step, the SQL scored by execution-majority vote`,
 
  hooks: {
    calls: { sample: { most: { per_repair: SAMPLES }, per: "repair_episode", temperature: TEMPERATURE } },
    propose: { name: "execution_vote", propose: selfConsistent },
  },
});

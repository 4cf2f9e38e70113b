/**
 * Experiment runs, prompts cut to max_input_tokens (METHOD.md §6.4; issue 39 item 21): the kit keeps
 * a prompt's last `max_input_tokens` tokens, which drops what a method put first — its memory
 * section, a hook's long prompt. The trajectories record each call's dropped tokens
 * (`truncated_prompt_tokens`); this says so on stderr — one line the first time a call kind is cut
 * in a run, one summary per kind when the run completes — and `merit report`'s cost table counts the
 * cut calls per method and kind.
 * @module
 */
import type { Trajectory } from "../repair/trajectory.ts";

/** Cut calls and dropped tokens per call kind over a run's trajectories. */
export function truncationsByKind(trajectories: readonly Pick<Trajectory, "call_kinds" | "truncated_prompt_tokens">[]): Map<string, { calls: number; tokens: number }> {
  const byKind = new Map<string, { calls: number; tokens: number }>();
  for (const t of trajectories) {
    t.call_kinds.forEach((kind, i) => {
      const dropped = t.truncated_prompt_tokens[i];
      if (dropped === 0) return;
      const c = byKind.get(kind) ?? { calls: 0, tokens: 0 };
      c.calls += 1;
      c.tokens += dropped;
      byKind.set(kind, c);
    });
  }
  return byKind;
}

/** The stderr lines of one run's cut prompts. */
export class TruncationLog {
  private readonly method: string;
  private readonly said = new Set<string>();

  constructor(method: string) {
    this.method = method;
  }

  /** One line per call kind cut for the first time in this run, naming the query and the tokens dropped. */
  episode(t: Pick<Trajectory, "call_kinds" | "truncated_prompt_tokens" | "query_id">): string[] {
    const lines: string[] = [];
    t.call_kinds.forEach((kind, i) => {
      const dropped = t.truncated_prompt_tokens[i];
      if (dropped === 0 || this.said.has(kind)) return;
      this.said.add(kind);
      lines.push(`method ${this.method}: a "${kind}" prompt of query ${t.query_id} was cut by ${dropped} tokens to its last max_input_tokens tokens (METHOD.md §6.4: what comes first — a memory section, the start of a hook's prompt — is lost); later cuts of this kind are counted in the run's summary and merit report's cost table`);
    });
    return lines;
  }

  /** The run's summary: cut calls and dropped tokens per kind; null when nothing was cut. */
  summary(trajectories: readonly Pick<Trajectory, "call_kinds" | "truncated_prompt_tokens">[]): string | null {
    const byKind = truncationsByKind(trajectories);
    if (byKind.size === 0) return null;
    const parts = [...byKind].map(([kind, c]) => `${kind} ${c.calls} call${c.calls === 1 ? "" : "s"} (${c.tokens} tokens dropped)`);
    return `method ${this.method}: prompts cut to max_input_tokens: ${parts.join(", ")}`;
  }
}

// Tests lib/cli/progress.ts gridProgressReporter off a terminal: aggregate lines on io.err when a stream completes and at the end, the runs' own lines passed through.
import { describe, expect, it } from "vitest";
import { gridProgressReporter } from "../../lib/cli/progress.ts";

describe("gridProgressReporter (not a terminal)", () => {
  it("prints an aggregate line as each stream completes and once at the end", () => {
    expect(process.stderr.isTTY).toBeFalsy();
    const err: string[] = [];
    const r = gridProgressReporter({ out: () => undefined, err: (l) => err.push(l) }, 2);
    const calls = { computed: 3, hits: 1, errors: 0, retries: 0 };
    r.runLog!("resuming x");
    r.onProgress!({ key: "merit/s0", progress: { done: 1, total: 1, repaired: 1, tokens: 10 }, calls });
    r.onProgress!({ key: "iterative/s0", progress: { done: 1, total: 2, repaired: 0, tokens: 5 }, calls }); // within 5 s: not printed
    r.onFinished!(calls);
    expect(err).toEqual([
      "resuming x",
      expect.stringMatching(/^episodes 1\/1 \| streams done 1\/2 \| repaired 1 \| tokens 10 \| LLM calls 3 computed, 1 cached \| ETA /),
      expect.stringMatching(/^episodes 2\/3 \| streams done 1\/2 \| repaired 1 \| tokens 15 \| LLM calls 3 computed, 1 cached \| ETA /),
    ]);
  });
});

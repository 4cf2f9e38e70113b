// A propose hook's SQL is bounded (lib/repair/proposal.ts MAX_PROPOSED_SQL_BYTES; bench/fault-probes.ts
// "propose-huge"): a hook returning 4 MB of SQL was scored and stored, and the run's edit distance by
// step (quadratic in the tokens of consecutive attempts) then ran for hours after the last episode.
// Now it is refused in one line naming the method, the hook, the size and the bound.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import { MeritError } from "../../lib/errors.ts";
import type { ProposeHook, ProposeRequest, SamplingModel } from "../../lib/methods/hooks.ts";
import { MAX_PROPOSED_SQL_BYTES, proposeRepair } from "../../lib/repair/proposal.ts";

const model: SamplingModel = {
  reply: async () => ({ text: "", truncated: false }),
  generate: async () => "",
  embed: async () => new Float32Array(4),
  sample: async () => ({ text: "", truncated: false }),
} as unknown as SamplingModel;

function propose(sql: string) {
  const hook: ProposeHook = { name: "p", propose: () => sql };
  return proposeRepair({ hook, site: { method: "m", hook: "propose.propose", name: "p", queryId: "q1" }, model, deadlineS: 5, example: {} as Example, request: { greedy: "SELECT 1" } as unknown as ProposeRequest, execute: undefined });
}

describe("propose's SQL bound", () => {
  it("refuses SQL over 64 KiB in one line naming the method, the size and the bound", async () => {
    const huge = "SELECT 1 WHERE " + "1 = 1 AND ".repeat(400_000) + "1 = 1";
    const error = await propose(huge).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MeritError);
    expect((error as Error).message).toMatch(/^method "m": propose "p" returned 4000020 bytes of SQL for query q1; a proposed SQL holds at most 65536 bytes/);
    expect((error as Error).message).not.toContain("\n");
  });

  it("counts UTF-8 bytes and scores SQL at the bound as before", async () => {
    const at = "SELECT '" + "x".repeat(MAX_PROPOSED_SQL_BYTES - 9) + "'";
    expect(Buffer.byteLength(at)).toBe(MAX_PROPOSED_SQL_BYTES);
    expect((await propose(at)).sql).toBe(at);
    await expect(propose("SELECT '" + "é".repeat(MAX_PROPOSED_SQL_BYTES / 2) + "'")).rejects.toThrow(/bytes of SQL/);
    expect(await propose("")).toEqual({ sql: "", executions: 0 });
  });
});

// Throughput mode's configuration: `model.mode` in the config schema, its place in run identities,
// and the per-context thread choice (lib/llm/llama-runtime.ts `chooseThreads`).
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runManifestExtras } from "../../lib/experiment/provenance.ts";
import { runIdentity, type RunSpec } from "../../lib/experiment/run.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { describeThreads } from "../../lib/llm/llama-backend.ts";
import { chooseThreads } from "../../lib/llm/llama-runtime.ts";

const base = { dataset: "spider", data_dir: "data/spider", initial_cache: "x.json" };
const saved = process.env.MERIT_THREADS;
afterEach(() => {
  if (saved === undefined) delete process.env.MERIT_THREADS;
  else process.env.MERIT_THREADS = saved;
});

describe("model.mode", () => {
  it("defaults to deterministic and accepts throughput; anything else names the field", () => {
    expect(parseConfig(base).model.mode).toBe("deterministic");
    expect(parseConfig({ ...base, model: { mode: "throughput" } }).model.mode).toBe("throughput");
    expect(() => parseConfig({ ...base, model: { mode: "fast" } }, "c.json")).toThrow(/c\.json.*model\.mode/);
  });

  it("is part of a throughput run's identity, and absent from a deterministic one's (identities made before the mode existed stay valid)", () => {
    const spec = (mode: string) => ({ method: "merit", seed: 1, limit: null, config: parseConfig({ ...base, model: { mode, sequences: 4, threads: 2 } }) }) as unknown as RunSpec;
    const det = runIdentity(spec("deterministic")).config.model as Record<string, unknown>;
    const thr = runIdentity(spec("throughput")).config.model as Record<string, unknown>;
    expect("mode" in det).toBe(false);
    expect(thr.mode).toBe("throughput");
    expect([det.sequences, det.threads, thr.sequences, thr.threads]).toEqual([1, null, 1, null]);
  });
});

describe("exactness contract in the manifest", () => {
  const backend = (kind: string, params: Record<string, string>) => ({ identity: { kind, model: "m", modelHash: "h", params } }) as unknown as ChatBackend;
  it("says replay-exact always, and bit-exact recomputation only in deterministic mode", async () => {
    expect((await runManifestExtras(backend("llama.cpp", {}))).exactness).toBe("replay-exact through the call cache; recomputation bit-exact (deterministic mode)");
    expect((await runManifestExtras(backend("llama.cpp", { mode: "throughput" }))).exactness).toMatch(/^replay-exact through the call cache; recomputation may differ at near-tied logits/);
    expect((await runManifestExtras(backend("openai-compatible", {}))).exactness).toMatch(/depends on the server/);
  });
});

describe("threads per context", () => {
  it("divides the available cores among the contexts that decode at once, never oversubscribing", () => {
    delete process.env.MERIT_THREADS;
    expect(chooseThreads(1, undefined, 16)).toMatchObject({ threads: 16, source: "cores / contexts" });
    expect(chooseThreads(4, undefined, 16).threads).toBe(4);
    expect(chooseThreads(3, undefined, 8).threads).toBe(2);
    expect(chooseThreads(8, undefined, 2).threads).toBe(1);
    for (const [contexts, cores] of [[1, 2], [2, 2], [3, 2], [5, 16], [7, 64]]) {
      const { threads } = chooseThreads(contexts, undefined, cores);
      expect(threads === 1 || threads * contexts <= cores).toBe(true);
    }
  });

  it("MERIT_THREADS and the option override the choice; a bad MERIT_THREADS names the variable", () => {
    process.env.MERIT_THREADS = "3";
    expect(chooseThreads(8, undefined, 2)).toMatchObject({ threads: 3, source: "MERIT_THREADS" });
    expect(chooseThreads(8, 5, 2)).toMatchObject({ threads: 5, source: "option" });
    process.env.MERIT_THREADS = "two";
    expect(() => chooseThreads(1)).toThrow(/MERIT_THREADS/);
  });

  it("prints what was chosen and why", () => {
    expect(describeThreads("throughput", 8, { threads: 16, contexts: 1, cores: 16, source: "cores / contexts" })).toBe("llama.cpp throughput mode: 1 context × 8 sequences, 16 threads per context (16 cores available ÷ 1)");
    expect(describeThreads("deterministic", 4, { threads: 1, contexts: 4, cores: 2, source: "MERIT_THREADS" })).toBe("llama.cpp deterministic mode: 4 contexts, 1 thread per context (set by MERIT_THREADS)");
  });
});

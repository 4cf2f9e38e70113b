/**
 * Benchmark of the LLM layer (METHOD.md §6.4; DESIGN.md "bench/: print ratios and medians; never
 * asserted"): llama backend tokens/s vs a bare node-llama-cpp loop on the tiny Qwen GGUF (target
 * ratio ≥ 0.9; the bare loop's context has flash attention off like the backend's), aggregate
 * tokens/s with 1, 2, 4 parallel slots (one context each), call-cache hit latency, and embedding
 * throughput. Run: `node bench/llm.ts` (env MERIT_THREADS sets threads, default 1).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Token } from "node-llama-cpp";
import { CallCache } from "../lib/llm/call-cache.ts";
import { createLlamaBackend, loadLlamaModel } from "../lib/llm/llama-backend.ts";
import { createLlamaEmbedder } from "../lib/llm/llama-embedder.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const QWEN = join(ROOT, "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf");
const BGE = join(ROOT, "test/fixtures/models/tiny-random-bert-bge.gguf");
const THREADS = Number(process.env.MERIT_THREADS ?? 1);
const OUT = 128;
const REPS = 8;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => performance.now();
/** Process CPU time in ms (user + system): less sensitive than wall time to other load on the machine. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const prompt = (i: number) => `Question ${i}: how many singers are older than ${20 + i}? Answer with one SQL query.`;
const rows: Array<[string, string]> = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  process.stderr.write(`${name}: ${value}\n`);
};

const model = await loadLlamaModel(QWEN);
const hash = "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f";

// 1. Backend vs bare loop: same model, same prompt tokens, OUT tokens each (random weights never stop early).
{
  const penalised = await createLlamaBackend({ modelPath: QWEN, loadedModel: model, threads: THREADS, modelHash: hash, maxOutputTokensLimit: OUT });
  const plain = await createLlamaBackend({ modelPath: QWEN, loadedModel: model, threads: THREADS, modelHash: hash, maxOutputTokensLimit: OUT, repetitionPenalty: 1 });
  const context = await model.createContext({ contextSize: 4096 + OUT, threads: THREADS, flashAttention: false });
  const sequence = context.getSequence();
  // The bare loop optionally applies the same whole-context penalty, to separate llama.cpp's own
  // sampler cost (it scans all 151,936 candidates per step) from the wrapper's overhead.
  const bare = async (tokens: Token[], penalty: boolean) => {
    await sequence.clearHistory();
    const history = [...tokens];
    let n = 0;
    const repeatPenalty = penalty ? { punishTokens: () => history, maxPunishTokens: sequence.contextSize, penalty: 1.05 } : undefined;
    for await (const token of sequence.evaluate(tokens, { temperature: 0, repeatPenalty })) {
      history.push(token);
      if (++n >= OUT) break;
    }
    return n;
  };
  const rates = { bare: [] as number[], barePenalty: [] as number[], plain: [] as number[], penalised: [] as number[] };
  const cpuRates = { bare: [] as number[], barePenalty: [] as number[], plain: [] as number[], penalised: [] as number[] };
  // Variants run in a rotating order each repetition so no variant always goes first.
  for (let r = 0; r < REPS; r++) {
    const p = prompt(r);
    const tokens = plain.promptTokens(p).tokens;
    const variants: Array<[keyof typeof rates, () => Promise<number>]> = [
      ["bare", () => bare(tokens, false)],
      ["barePenalty", () => bare(tokens, true)],
      ["plain", async () => (await plain.generate({ prompt: p, maxOutputTokens: OUT })).outputTokens],
      ["penalised", async () => (await penalised.generate({ prompt: p, maxOutputTokens: OUT })).outputTokens],
    ];
    for (let k = 0; k < variants.length; k++) {
      const [name, run] = variants[(k + r) % variants.length];
      const [t, c] = [now(), cpu()];
      const n = await run();
      rates[name].push(n / ((now() - t) / 1000));
      cpuRates[name].push(n / ((cpu() - c) / 1000));
    }
  }
  const line = (name: keyof typeof rates, base?: keyof typeof rates) => {
    const [wall, perCpu] = [median(rates[name]), median(cpuRates[name])];
    const ratio = base ? `; ratio to ${base}: wall ${(wall / median(rates[base])).toFixed(3)}, cpu ${(perCpu / median(cpuRates[base])).toFixed(3)}` : "";
    return `${wall.toFixed(1)} tok/s wall, ${perCpu.toFixed(1)} tok per CPU-s${ratio}`;
  };
  report(`bare node-llama-cpp loop (${OUT} tok, ${THREADS} thr)`, line("bare"));
  report("llama backend, repetition penalty off", line("plain", "bare"));
  report("bare loop + whole-context penalty 1.05", line("barePenalty"));
  report("llama backend, penalty 1.05 (HF scope)", line("penalised", "barePenalty"));

  // 3. Cache-hit latency over the penalised backend.
  const dir = mkdtempSync(join(tmpdir(), "merit-bench-"));
  const cache = new CallCache(penalised, join(dir, "cache.sqlite"));
  const request = { prompt: prompt(0), maxOutputTokens: OUT };
  await cache.generate(request);
  const hits: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = now();
    await cache.generate(request);
    hits.push((now() - t) * 1000);
  }
  report("call-cache hit latency (median of 200)", `${median(hits).toFixed(0)} µs`);
  await cache.close();
  rmSync(dir, { recursive: true, force: true });
  await context.dispose();
  await plain.close();
  await penalised.close();
}

// 2. Aggregate throughput with 1, 2, 4 parallel slots (N concurrent calls per round).
for (const n of [1, 2, 4]) {
  const backend = await createLlamaBackend({ modelPath: QWEN, loadedModel: model, threads: THREADS, sequences: n, modelHash: hash, maxOutputTokensLimit: 64 });
  const rates: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = now();
    const results = await Promise.all(Array.from({ length: n }, (_, i) => backend.generate({ prompt: prompt(r * 10 + i), maxOutputTokens: 64 })));
    rates.push(results.reduce((s, x) => s + x.outputTokens, 0) / ((now() - t) / 1000));
  }
  report(`aggregate, ${n} parallel slot(s)`, `${median(rates).toFixed(1)} tok/s`);
  await backend.close();
}
await model.dispose();

// 4. Embedding throughput (distinct texts: no cache hits).
{
  const embedder = await createLlamaEmbedder({ modelPath: BGE, threads: THREADS });
  const rates: number[] = [];
  for (let r = 0; r < 3; r++) {
    const texts = Array.from({ length: 200 }, (_, i) => `round ${r} text ${i}: select name from singer where age > ${i}`);
    const t = now();
    await embedder.embed(texts);
    rates.push(texts.length / ((now() - t) / 1000));
  }
  report("embeddings (tiny bge, 200 texts)", `${median(rates).toFixed(0)} texts/s`);
  await embedder.close();
}

process.stdout.write("\n| measurement | median |\n| --- | --- |\n" + rows.map(([a, b]) => `| ${a} | ${b} |`).join("\n") + "\n");

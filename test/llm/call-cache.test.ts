// Tests lib/llm/call-cache.ts, lib/llm/cache-admin.ts and `merit cache` (METHOD.md §6.6): warm re-runs
// make zero inner calls and reproduce outputs byte for byte; errors are not cached; two processes can
// write one file; verify finds edited rows; prune by identity and age. Also once with the tiny Qwen.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { contentHash } from "../../lib/hash.ts";
import { cacheStats, pruneCache, verifyCache } from "../../lib/llm/cache-admin.ts";
import { CallCache, callKey, identityJson } from "../../lib/llm/call-cache.ts";
import { createLlamaBackend } from "../../lib/llm/llama-backend.ts";
import { ScriptedBackend } from "./fixtures/scripted-backend.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "merit-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => join(dir, `cache-${n++}.sqlite`);
const PROMPTS = ["q1", "q2 é", "q3\nmulti-line", "q1"];

async function runAll(cache: CallCache) {
  const out = [];
  for (const prompt of PROMPTS) out.push(await cache.generate({ prompt, maxOutputTokens: 32 }));
  return out;
}

function captureIO() {
  const io = { out: [] as string[], err: [] as string[] };
  return { io, sink: { out: (l: string) => io.out.push(l), err: (l: string) => io.err.push(l) } };
}

describe("CallCache over a scripted backend", () => {
  it("a warm re-run makes zero inner calls and returns the same bytes and counts", async () => {
    const file = freshFile();
    const cold = new CallCache(new ScriptedBackend(), file);
    const first = await runAll(cold);
    // 4 requests, "q1" twice: 3 computed, 1 hit.
    expect(cold.stats()).toEqual({ hits: 1, computed: 3, errors: 0, retries: 0 });
    await cold.close();

    const inner = new ScriptedBackend();
    const warm = new CallCache(inner, file);
    const second = await runAll(warm);
    expect(inner.calls).toBe(0);
    expect(warm.stats()).toEqual({ hits: 4, computed: 0, errors: 0, retries: 0 });
    expect(second.map((r) => ({ ...r, cached: false }))).toEqual(first.map((r) => ({ ...r, cached: false })));
    expect(second.every((r) => r.cached)).toBe(true);
    expect(Buffer.from(second[1].text)).toEqual(Buffer.from(first[1].text));
    await warm.close();
    expect(inner.closed).toBe(false); // the creator of the inner backend owns it
  });

  it("the key changes with identity params and maxOutputTokens, not with the object", () => {
    const a = new ScriptedBackend("m", { decoding: "greedy", repetitionPenalty: 1.05 });
    const b = new ScriptedBackend("m", { decoding: "greedy", repetitionPenalty: 1 });
    const req = { prompt: "p", maxOutputTokens: 8 };
    expect(callKey(a.identity, req)).toBe(callKey(new ScriptedBackend("m", { repetitionPenalty: 1.05, decoding: "greedy" }).identity, req));
    expect(callKey(a.identity, req)).not.toBe(callKey(b.identity, req));
    expect(callKey(a.identity, req)).not.toBe(callKey(a.identity, { prompt: "p", maxOutputTokens: 9 }));
    // The key is sha256 of canonical JSON {backend, request} (lib/hash.ts).
    expect(callKey(a.identity, req)).toBe(contentHash({ backend: identityJson(a.identity), request: { prompt: "p", maxOutputTokens: 8 } }));
  });

  it("errors are never cached and are counted separately", async () => {
    const inner = new ScriptedBackend();
    const cache = new CallCache(inner, freshFile());
    await expect(cache.generate({ prompt: "FAIL once", maxOutputTokens: 4 })).rejects.toThrow(/scripted failure/);
    await expect(cache.generate({ prompt: "FAIL once", maxOutputTokens: 4 })).rejects.toThrow(/scripted failure/);
    expect(inner.calls).toBe(2);
    expect(cache.stats()).toEqual({ hits: 0, computed: 0, errors: 2, retries: 0 });
    await cache.close();
  });

  it("concurrent identical requests compute once", async () => {
    const inner = new ScriptedBackend();
    const cache = new CallCache(inner, freshFile());
    const results = await Promise.all([1, 2, 3].map(() => cache.generate({ prompt: "same", maxOutputTokens: 4 })));
    expect(inner.calls).toBe(1);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(cache.stats()).toEqual({ hits: 2, computed: 1, errors: 0, retries: 0 });
    await cache.close();
  });

  it("a call's transient retries pass through once, are counted, and are neither stored nor keyed", async () => {
    const file = freshFile();
    const retrying = new ScriptedBackend();
    const generate = retrying.generate.bind(retrying);
    retrying.generate = async (request) => ({ ...(await generate(request)), retries: 3 });
    const cold = new CallCache(retrying, file);
    const [first, second] = await Promise.all([cold.generate({ prompt: "r", maxOutputTokens: 4 }), cold.generate({ prompt: "r", maxOutputTokens: 4 })]);
    expect(first.retries).toBe(3);
    expect(second.retries).toBeUndefined(); // the concurrent twin was not retried itself
    expect(cold.stats()).toEqual({ hits: 1, computed: 1, errors: 0, retries: 3 });
    await cold.close();
    const warm = new CallCache(new ScriptedBackend(), file);
    const replayed = await warm.generate({ prompt: "r", maxOutputTokens: 4 });
    expect(replayed).toEqual({ text: first.text, promptTokens: first.promptTokens, outputTokens: first.outputTokens, truncatedPromptTokens: first.truncatedPromptTokens, cached: true });
    expect(warm.stats()).toEqual({ hits: 1, computed: 0, errors: 0, retries: 0 });
    await warm.close();
  });

  it("two processes writing overlapping keys to one file leave every row intact", async () => {
    const file = freshFile();
    await new CallCache(new ScriptedBackend(), file).close(); // create the schema first
    const run = promisify(execFile);
    // Both children start writing at the same moment (after their ~1 s start-up) so writes interleave.
    const startAt = Date.now() + 3000;
    const child = (from: number, to: number) =>
      run(process.execPath, [join(ROOT, "test/llm/fixtures/cache-writer.ts"), file, String(from), String(to), String(startAt)], { cwd: ROOT });
    // Writers 0..299 and 150..449 overlap on 150..299: 450 distinct keys in total.
    const [a, b] = await Promise.all([child(0, 300), child(150, 450)]);
    const statsA = JSON.parse(a.stdout) as { hits: number; computed: number };
    const statsB = JSON.parse(b.stdout) as { hits: number; computed: number };
    expect(statsA.hits + statsA.computed).toBe(300);
    expect(statsB.hits + statsB.computed).toBe(300);
    expect(verifyCache(file)).toEqual({ rows: 450, embeddingRows: 0, corrupt: [] });
  });
});

describe("cache admin and `merit cache`", () => {
  it("verify reports an edited row; stats groups by identity; prune keeps one identity", async () => {
    const file = freshFile();
    const one = new CallCache(new ScriptedBackend("one"), file);
    await runAll(one);
    await one.close();
    const two = new CallCache(new ScriptedBackend("two"), file);
    await two.generate({ prompt: "other", maxOutputTokens: 4 });
    await two.close();

    expect(verifyCache(file)).toEqual({ rows: 4, embeddingRows: 0, corrupt: [] });
    const db = new Database(file);
    db.prepare("UPDATE calls SET text = 'tampered' WHERE request LIKE '%q2%'").run();
    db.close();
    const { corrupt } = verifyCache(file);
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0].reason).toMatch(/row_hash/);

    const { io, sink } = captureIO();
    expect(await main(["cache", "verify", "--cache", file], sink)).toBe(1);
    expect(io.out.at(-1)).toBe(`4 row(s) checked, 1 corrupt in ${file}`);

    const stats = cacheStats(file);
    expect(stats.rows).toBe(4);
    expect(stats.identities.map((g) => [g.model, g.rows])).toEqual([["one", 3], ["two", 1]]);
    const keep = stats.identities[0].identityHash;
    const { io: pio, sink: psink } = captureIO();
    expect(await main(["cache", "prune", "--cache", file, "--keep-identity", keep], psink)).toBe(0);
    expect(pio.out).toEqual([`pruned 1 row(s) from ${file}`]);
    expect(cacheStats(file).identities.map((g) => g.model)).toEqual(["one"]);
  });

  it("prune --older-than removes rows created before the cutoff", async () => {
    const file = freshFile();
    const cache = new CallCache(new ScriptedBackend(), file);
    await runAll(cache);
    await cache.close();
    const db = new Database(file);
    db.prepare("UPDATE calls SET created_at = '2020-01-01T00:00:00.000Z' WHERE request LIKE '%q1%'").run();
    db.close();
    // created_at is outside the row hash, so the back-dated row was still valid; 2 rows remain.
    expect(pruneCache(file, { olderThanDays: 30 })).toBe(1);
    expect(verifyCache(file)).toEqual({ rows: 2, embeddingRows: 0, corrupt: [] });
  });

  it("usage errors name the problem", async () => {
    const { io, sink } = captureIO();
    expect(await main(["cache", "prune", "--cache", freshFile()], sink)).toBe(2);
    expect(io.err[0]).toMatch(/cache file not found/);
    expect(await main(["cache", "stats"], sink)).toBe(2);
    expect(io.err[1]).toMatch(/missing required flag --cache/);
  });
});

describe("CallCache over the tiny Qwen", () => {
  it("reproduces real generations byte for byte with zero model calls", async () => {
    const file = freshFile();
    const backend = await createLlamaBackend({
      modelPath: join(ROOT, "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf"),
      threads: 1,
      modelHash: "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f",
    });
    const requests = [{ prompt: "How many singers?", maxOutputTokens: 12 }, { prompt: "List stadiums.", maxOutputTokens: 12 }];
    const cold = new CallCache(backend, file);
    const first = [];
    for (const r of requests) first.push(await cold.generate(r));
    expect(cold.stats()).toEqual({ hits: 0, computed: 2, errors: 0, retries: 0 });
    const warm = new CallCache(backend, file); // same backend object: a miss would call the model
    const second = [];
    for (const r of requests) second.push(await warm.generate(r));
    expect(warm.stats()).toEqual({ hits: 2, computed: 0, errors: 0, retries: 0 });
    expect(second.map((r) => r.text)).toEqual(first.map((r) => r.text));
    expect(second.map((r) => [r.promptTokens, r.outputTokens])).toEqual(first.map((r) => [r.promptTokens, r.outputTokens]));
    await cold.close();
    await warm.close();
    await backend.close();
  });
});

// Tests lib/llm/models.ts, lib/llm/model-file.ts and `merit models` (METHOD.md §6.4, `make models`):
// download from a local HTTP server (127.0.0.1) serving a tiny GGUF, Range resume of a partial file,
// sha256 mismatch and unpinned hashes, and a one-line diagnosis for every bad-model case.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { llamaRuntime } from "../../lib/llm/llama-runtime.ts";
import { checkModelFile } from "../../lib/llm/model-file.ts";
import { ensureModel, ModelHashMismatchError, modelUrl, readModelManifest, type ModelEntry } from "../../lib/llm/models.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = join(ROOT, "test/fixtures/models");
const QWEN = join(FIXTURES, "tiny-random-qwen2.5-instruct.gguf");
const BGE = join(FIXTURES, "tiny-random-bert-bge.gguf"); // the "ok" case: loads faster than the Qwen vocab
const BYTES = readFileSync(QWEN);
const SHA = "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f"; // PROVENANCE.md
const dir = mkdtempSync(join(tmpdir(), "merit-models-"));

// A file server with Range support that records each request's Range header and bytes sent.
const log: Array<{ url: string; range: string | undefined; sent: number }> = [];
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== "/tiny.gguf") {
      log.push({ url: req.url ?? "", range: undefined, sent: 0 });
      res.writeHead(404).end("not found");
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const start = range ? Number(range[1]) : 0;
    const body = BYTES.subarray(start);
    log.push({ url: req.url, range: req.headers.range, sent: body.length });
    res.writeHead(range ? 206 : 200, { "content-length": body.length, "content-type": "application/octet-stream" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const entry = (over: Partial<ModelEntry> = {}): ModelEntry => ({
  role: "chat",
  uri: `${base}/tiny.gguf`,
  file: "tiny.gguf",
  bytes: BYTES.length,
  sha256: SHA,
  source: "test server",
  ...over,
});
let n = 0;
const freshDir = () => join(dir, `d${n++}`);

describe("ensureModel", () => {
  it("downloads, verifies, reports progress, then is a no-op when present", async () => {
    const d = freshDir();
    const progress: Array<[number, number | undefined]> = [];
    const result = await ensureModel(entry(), { dir: d, onProgress: (r, t) => progress.push([r, t]) });
    expect(result).toEqual({ path: join(d, "tiny.gguf"), status: "downloaded", sha256: SHA, bytes: BYTES.length });
    expect(readFileSync(result.path).equals(BYTES)).toBe(true);
    expect(progress.at(-1)).toEqual([BYTES.length, BYTES.length]);
    expect(existsSync(`${result.path}.partial`)).toBe(false);
    const requests = log.length;
    expect((await ensureModel(entry(), { dir: d })).status).toBe("present");
    expect(log.length).toBe(requests); // no HTTP request at all
  });

  it("resumes a partial file with a Range request", async () => {
    const d = freshDir();
    await ensureModel(entry({ sha256: SHA, uri: "http://127.0.0.1:9/unreachable" }), { dir: d }).catch(() => undefined);
    writeFileSync(join(d, "tiny.gguf.partial"), BYTES.subarray(0, 1_000_000));
    const result = await ensureModel(entry(), { dir: d });
    expect(result.status).toBe("downloaded");
    expect(log.at(-1)).toEqual({ url: "/tiny.gguf", range: "bytes=1000000-", sent: BYTES.length - 1_000_000 });
    expect(readFileSync(result.path).equals(BYTES)).toBe(true);
  });

  it("a sha256 mismatch deletes the download and says so", async () => {
    const d = freshDir();
    const wrong = "0".repeat(64);
    const error = await ensureModel(entry({ sha256: wrong }), { dir: d }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelHashMismatchError);
    expect((error as Error).message).toContain(`sha256 ${SHA} does not match models/models.json (${wrong})`);
    expect(existsSync(join(d, "tiny.gguf"))).toBe(false);
    expect(existsSync(join(d, "tiny.gguf.partial"))).toBe(false);
  });

  it("an unpinned sha256 is downloaded but reported unverified with the computed hash", async () => {
    const result = await ensureModel(entry({ sha256: null, bytes: null }), { dir: freshDir() });
    expect(result.status).toBe("unverified");
    expect(result.sha256).toBe(SHA);
  });

  it("HTTP 404 names the URL and the manifest", async () => {
    await expect(ensureModel(entry({ uri: `${base}/missing.gguf` }), { dir: freshDir() })).rejects.toThrow(`${base}/missing.gguf answered HTTP 404; check the uri in models/models.json`);
  });

  it("hf: URIs resolve to the main-branch file URL; the repo manifest parses", () => {
    expect(modelUrl("hf:owner/repo/sub/file.gguf")).toBe("https://huggingface.co/owner/repo/resolve/main/sub/file.gguf");
    const manifest = readModelManifest(join(ROOT, "models/models.json"));
    expect(Object.values(manifest).map((m) => m.role).sort()).toEqual(["chat", "embedding"]);
  });
});

describe("checkModelFile: one line per bad model", () => {
  const bad = (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };

  it("ok, missing, header cut, tensor data cut, random bytes, vocab-only", async () => {
    const llama = await llamaRuntime(false);
    const cases = {
      ok: BGE,
      missing: join(dir, "nope.gguf"),
      header: bad("header-cut.gguf", BYTES.subarray(0, 3_000_000)),
      tensors: bad("tensor-cut.gguf", BYTES.subarray(0, 10_000_000)),
      random: bad("random.gguf", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) % 251))),
      vocab: join(FIXTURES, "ggml-vocab-bert-bge.gguf"),
    };
    const results = Object.fromEntries(await Promise.all(Object.entries(cases).map(async ([k, p]) => [k, await checkModelFile(p, { llama })] as const)));
    expect(results.ok.problem).toBe("ok");
    expect(results.missing.problem).toBe("missing");
    expect(results.header.problem).toBe("truncated");
    expect(results.header.message).toMatch(/GGUF header cannot be read/);
    expect(results.tensors.problem).toBe("truncated");
    expect(results.tensors.message).toMatch(/truncated GGUF file: 10000000 bytes, tensor data needs at least \d+/);
    expect(results.random.problem).toBe("not-gguf");
    expect(results.vocab.problem).toBe("load-failed");
    expect(results.vocab.message).toMatch(/Failed to load model: missing tensor 'token_embd\.weight'/);
    for (const [name, r] of Object.entries(results)) {
      if (name === "ok") continue;
      expect(r.message).toContain(cases[name as keyof typeof cases]);
      expect(r.message).toContain("make models");
      expect(r.message).not.toContain("\n");
    }
  });

  it("`merit models check --file` prints that line and exits 1; a good file exits 0", async () => {
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => undefined };
    const copy = join(dir, "copy.gguf");
    copyFileSync(BGE, copy);
    expect(await main(["models", "check", "--file", copy], io)).toBe(0);
    expect(out[0]).toBe(`${copy}: ok`);
    expect(await main(["models", "check", "--file", join(dir, "nope.gguf"), "--no-load"], io)).toBe(1);
    expect(out[1]).toMatch(/nope\.gguf: model file is missing; run `make models`/);
  });
});

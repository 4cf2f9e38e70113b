// Tests lib/llm/model-lock.ts, the hub-verified path of lib/llm/models.ts and `merit models download|check`
// (METHOD.md §6.4): a local HTTP server (127.0.0.1, stopped after the tests) answers the Hugging Face
// revision API shape (`/api/models/{repo}/revision/{rev}?blobs=true` → sha, siblings[].lfs.{sha256,size})
// and serves a tiny GGUF at `/{repo}/resolve/{commit}/{file}`; the first download is verified against
// the published hash and writes models.lock.json, later ones and `models check` verify against the lock.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { hubEndpoint, publishedFile, readModelLock } from "../../lib/llm/model-lock.ts";
import { ensureModel, ModelHashMismatchError, modelUrl, type ModelEntry } from "../../lib/llm/models.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BYTES = readFileSync(join(ROOT, "test/fixtures/models/tiny-random-bert-bge.gguf"));
const SHA = createHash("sha256").update(BYTES).digest("hex");
const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const dir = mkdtempSync(join(tmpdir(), "merit-model-lock-"));

// What the fake hub publishes per repo: the LFS record of tiny.gguf (null = a non-LFS file, absent = no such file).
const published: Record<string, { lfs?: { sha256: string; size: number } | null } | undefined> = {
  "acme/tiny-GGUF": { lfs: { sha256: SHA, size: BYTES.length } },
  "acme/wrong-GGUF": { lfs: { sha256: "0".repeat(64), size: BYTES.length } },
  "acme/short-GGUF": { lfs: { sha256: SHA, size: BYTES.length + 1 } },
  "acme/nolfs-GGUF": { lfs: null },
  "acme/other-GGUF": undefined,
};
const api: string[] = [];
const files: string[] = [];
let server: Server;
let hub: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", hub);
    const revision = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname);
    if (revision && url.searchParams.get("blobs") === "true") {
      api.push(`${revision[1]}@${decodeURIComponent(revision[2])}`);
      if (!(revision[1] in published)) return res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Repository not found"}');
      const record = published[revision[1]];
      const siblings = [{ rfilename: "README.md", size: 12, blobId: "b".repeat(40) }];
      if (record) siblings.push({ rfilename: "tiny.gguf", size: BYTES.length, blobId: "c".repeat(40), ...(record.lfs ? { lfs: { ...record.lfs, pointerSize: 134 } } : {}) });
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ _id: "x", id: revision[1], sha: COMMIT, siblings }));
    }
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/tiny\.gguf$/.exec(url.pathname);
    if (resolve && resolve[2] === COMMIT) {
      files.push(resolve[1]);
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
      const start = range ? Number(range[1]) : 0;
      return res.writeHead(range ? 206 : 200, { "content-type": "application/octet-stream", "content-length": BYTES.length - start }).end(BYTES.subarray(start));
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  hub = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  setTimeout(() => server.close(), 120_000).unref();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const fresh = () => {
  const d = join(dir, `d${n++}`);
  mkdirSync(d, { recursive: true });
  return { models: d, lock: join(d, "models.lock.json") };
};
const entry = (repo: string): ModelEntry => ({ role: "embedding", uri: `hf:${repo}/tiny.gguf`, file: "tiny.gguf", bytes: null, sha256: null, source: "test hub" });

describe("the hub's published hash", () => {
  it("is read from the revision API; the hub URL comes from HF_ENDPOINT", async () => {
    expect(await publishedFile("acme/tiny-GGUF", "tiny.gguf", "main", { hub })).toEqual({ revision: COMMIT, bytes: BYTES.length, sha256: SHA });
    expect(hubEndpoint({ HF_ENDPOINT: `${hub}/` })).toBe(hub);
    expect(hubEndpoint({})).toBe("https://huggingface.co");
    expect(modelUrl("hf:acme/tiny-GGUF/tiny.gguf", COMMIT, hub)).toBe(`${hub}/acme/tiny-GGUF/resolve/${COMMIT}/tiny.gguf`);
  });

  it("a missing hash, a missing file or an unknown repo is one clear line", async () => {
    await expect(publishedFile("acme/nolfs-GGUF", "tiny.gguf", "main", { hub })).rejects.toThrow('the hub publishes no LFS sha256 for tiny.gguf in acme/nolfs-GGUF@main; pin "sha256" and "bytes" in models/models.json by hand after checking the file');
    await expect(publishedFile("acme/other-GGUF", "tiny.gguf", "main", { hub })).rejects.toThrow("the hub lists no file tiny.gguf in acme/other-GGUF@main (1 files); check the uri in models/models.json");
    await expect(publishedFile("acme/gone", "tiny.gguf", "v1", { hub })).rejects.toThrow(`${hub}/api/models/acme/gone/revision/v1?blobs=true answered HTTP 404; check the uri and revision of tiny.gguf in models/models.json`);
  });
});

describe("ensureModel against the hub and the lock", () => {
  it("verifies the first download against the published hash, writes the lock, then uses only the lock", async () => {
    const { models, lock } = fresh();
    const verified: string[] = [];
    const result = await ensureModel(entry("acme/tiny-GGUF"), { dir: models, hub, lock: { id: "tiny", file: lock }, onVerified: (v) => verified.push(`${v.source} ${v.locked}`) });
    expect(result).toEqual({ path: join(models, "tiny.gguf"), status: "downloaded", sha256: SHA, bytes: BYTES.length });
    expect(verified).toEqual([`the hub's published LFS hash (acme/tiny-GGUF@${COMMIT}) true`]);
    expect(readModelLock(lock)).toEqual({ tiny: { uri: "hf:acme/tiny-GGUF/tiny.gguf", file: "tiny.gguf", revision: COMMIT, bytes: BYTES.length, sha256: SHA } });
    const lockText = readFileSync(lock, "utf8");

    // The hub now publishes another hash for main: the lock (commit, size, sha256) decides, no API call.
    published["acme/tiny-GGUF"] = { lfs: { sha256: "f".repeat(64), size: 7 } };
    try {
      const calls = api.length;
      rmSync(join(models, "tiny.gguf"));
      expect((await ensureModel(entry("acme/tiny-GGUF"), { dir: models, hub, lock: { id: "tiny", file: lock } })).status).toBe("downloaded");
      expect((await ensureModel(entry("acme/tiny-GGUF"), { dir: models, hub, lock: { id: "tiny", file: lock } })).status).toBe("present");
      expect(api.length).toBe(calls);
      expect(readFileSync(lock, "utf8")).toBe(lockText);
    } finally {
      published["acme/tiny-GGUF"] = { lfs: { sha256: SHA, size: BYTES.length } };
    }
  });

  it("a hash or size that differs from the published one: one line, no model file, no partial, no lock", async () => {
    for (const repo of ["acme/wrong-GGUF", "acme/short-GGUF"]) {
      const { models, lock } = fresh();
      const error = await ensureModel(entry(repo), { dir: models, hub, lock: { id: "tiny", file: lock } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelHashMismatchError);
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toMatch(repo === "acme/wrong-GGUF" ? new RegExp(`sha256 ${SHA} does not match the hub's published LFS hash \\(${repo}@${COMMIT}\\) \\(0{64}\\); the bad download was deleted`) : /size \d+ bytes does not match the hub's published LFS hash .* \(\d+ bytes\); the bad download was deleted/);
      expect(readdirSync(models)).toEqual([]);
      expect(existsSync(lock)).toBe(false);
    }
  });

  it("a lock entry for another uri is refused with the fix", async () => {
    const { models, lock } = fresh();
    await ensureModel(entry("acme/tiny-GGUF"), { dir: models, hub, lock: { id: "tiny", file: lock } });
    await expect(ensureModel(entry("acme/wrong-GGUF"), { dir: models, hub, lock: { id: "tiny", file: lock } })).rejects.toThrow(/entry "tiny" pins hf:acme\/tiny-GGUF\/tiny\.gguf as tiny\.gguf, but models\.json now names hf:acme\/wrong-GGUF\/tiny\.gguf .*delete that entry/);
  });
});

describe("merit models download|check with the lock", () => {
  const cli = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const previous = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = hub;
    try {
      const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
      return { code, out, err };
    } finally {
      if (previous === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = previous;
    }
  };

  it("downloads and pins through HF_ENDPOINT; check verifies against the lock and names a corrupt file", async () => {
    const { models, lock } = fresh();
    const manifest = join(models, "models.json");
    writeFileSync(manifest, JSON.stringify({ models: { tiny: entry("acme/tiny-GGUF") } }));
    const download = await cli(["models", "download", "--dir", models, "--manifest", manifest]);
    expect(download.code).toBe(0);
    expect(download.out).toEqual([`tiny downloaded ${join(models, "tiny.gguf")} sha256 ${SHA}`]);
    expect(download.err).toContain(`tiny.gguf: recorded revision ${COMMIT}, size and sha256 in ${lock}; later downloads and \`merit models check\` verify against it`);
    expect(readModelLock(lock).tiny.sha256).toBe(SHA);

    const good = await cli(["models", "check", "--dir", models, "--manifest", manifest, "--no-load"]);
    expect(good).toMatchObject({ code: 0, out: [`${join(models, "tiny.gguf")}: ok (size and sha256 match ${lock})`] });
    const corrupt = Buffer.from(BYTES);
    corrupt[corrupt.length - 1] ^= 0xff; // same size, last tensor byte flipped: still a well-formed GGUF
    writeFileSync(join(models, "tiny.gguf"), corrupt);
    const bad = await cli(["models", "check", "--dir", models, "--manifest", manifest, "--no-load"]);
    expect(bad.code).toBe(1);
    expect(bad.out).toEqual([`${join(models, "tiny.gguf")}: sha256 ${createHash("sha256").update(corrupt).digest("hex")} does not match ${lock} (${SHA}); delete the file and re-run \`make models\``]);
    const again = await cli(["models", "download", "--dir", models, "--manifest", manifest]);
    expect(again.code).toBe(2);
    expect(again.err).toEqual([expect.stringMatching(new RegExp(`^merit models: .*tiny\\.gguf: sha256 [0-9a-f]{64} does not match ${lock.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(${SHA}\\); delete the file and re-run`))]);
    expect(readFileSync(join(models, "tiny.gguf")).equals(corrupt)).toBe(true); // a present file is never deleted
  });

  it("a missing published hash stops the download with one line and writes nothing", async () => {
    const { models, lock } = fresh();
    const manifest = join(models, "models.json");
    writeFileSync(manifest, JSON.stringify({ models: { tiny: entry("acme/nolfs-GGUF") } }));
    const result = await cli(["models", "download", "--dir", models, "--manifest", manifest]);
    expect(result.code).toBe(2);
    expect(result.err).toEqual([expect.stringMatching(/^merit models: the hub publishes no LFS sha256 for tiny\.gguf in acme\/nolfs-GGUF@main/)]);
    expect(readdirSync(models)).toEqual(["models.json"]);
    expect(existsSync(lock)).toBe(false);
  });
});

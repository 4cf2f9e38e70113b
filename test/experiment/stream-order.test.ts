/**
 * Tests lib/experiment/stream-order.ts and `merit stream-order` (METHOD.md §7, §11.4): orders equal
 * CPython's random.Random(seed).shuffle(list(range(n))) for Spider (1,034) and BIRD (1,534) sizes,
 * and dropping unavailable examples keeps the relative order.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { availableStream, streamOrder } from "../../lib/experiment/stream-order.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { orders } = JSON.parse(readFileSync(join(ROOT, "test/fixtures/random/stream-orders.json"), "utf8")) as {
  orders: Record<string, number[]>;
};

async function runCli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("streamOrder", () => {
  for (const n of [1034, 1534]) {
    for (const seed of [0, 1, 2]) {
      it(`n=${n} seed=${seed} equals CPython's shuffle`, () => {
        const expected = orders[`${n}/${seed}`];
        expect(expected).toHaveLength(n);
        expect(streamOrder(n, seed)).toEqual(expected);
      });
    }
  }

  it("is a permutation of 0..n−1, and seeds give different orders", () => {
    const order = streamOrder(1034, 1);
    expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: 1034 }, (_, i) => i));
    expect(order).not.toEqual(streamOrder(1034, 2));
  });

  it("handles n = 0 and n = 1 and refuses a negative n", () => {
    expect(streamOrder(0, 0)).toEqual([]);
    expect(streamOrder(1, 0)).toEqual([0]);
    expect(() => streamOrder(-1, 0)).toThrow(/non-negative/);
  });
});

describe("availableStream", () => {
  it("drops unavailable indices, keeps relative order, renumbers positions", () => {
    // order [4, 0, 3, 1, 2] without the odd indices → [4, 0, 2]: positions 0, 1, 2.
    expect(availableStream([4, 0, 3, 1, 2], (i) => i % 2 === 0)).toEqual([4, 0, 2]);
    expect(availableStream([2, 1, 0], () => false)).toEqual([]);
  });

  it("on Spider dev drops the 62 wta_1 questions and keeps the seed's relative order", () => {
    const dev = JSON.parse(readFileSync(join(ROOT, "data/spider/dev.json"), "utf8")) as { db_id: string }[];
    const order = streamOrder(dev.length, 0);
    const stream = availableStream(order, (i) => dev[i].db_id !== "wta_1");
    expect(stream).toHaveLength(1034 - 62);
    expect(stream.every((i) => dev[i].db_id !== "wta_1")).toBe(true);
    // relative order: the positions of the kept indices in the full order are increasing
    const positionInFull = new Map(order.map((index, p) => [index, p]));
    const positions = stream.map((i) => positionInFull.get(i)!);
    expect(positions.every((p, k) => k === 0 || p > positions[k - 1])).toBe(true);
  });
});

describe("merit stream-order", () => {
  const temp = mkdtempSync(join(tmpdir(), "merit-stream-order-"));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it("prints CPython's order over all Spider dev examples as one JSON array", async () => {
    const { code, out } = await runCli(["stream-order", "--dataset", "spider", "--data", join(ROOT, "data/spider"), "--seed", "1"]);
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0])).toEqual(orders["1034/1"]);
  });

  it("counts BIRD dev (1,534 questions)", async () => {
    const { code, out } = await runCli(["stream-order", "--dataset", "bird", "--data", join(ROOT, "data/bird"), "--seed", "2"]);
    expect(code).toBe(0);
    expect(JSON.parse(out[0])).toEqual(orders["1534/2"]);
  });

  it("malformed dev.json is an input error naming the file (exit 2)", async () => {
    writeFileSync(join(temp, "dev.json"), '[{"db_id": "x"},');
    const { code, err } = await runCli(["stream-order", "--dataset", "spider", "--data", temp, "--seed", "0"]);
    expect(code).toBe(2);
    expect(err.join("\n")).toMatch(/dev\.json: malformed JSON/);
  });

  it("a directory without dev.json, a non-array, an unknown dataset and a bad seed are refused", async () => {
    const missing = await runCli(["stream-order", "--dataset", "spider", "--data", join(temp, "nope"), "--seed", "0"]);
    expect(missing.code).toBe(2);
    expect(missing.err.join("\n")).toMatch(/cannot read \(ENOENT\).*data\/spider/);
    writeFileSync(join(temp, "dev.json"), '{"db_id": "x"}');
    const object = await runCli(["stream-order", "--dataset", "spider", "--data", temp, "--seed", "0"]);
    expect(object.err.join("\n")).toMatch(/expected a JSON array/);
    const dataset = await runCli(["stream-order", "--dataset", "spidr", "--data", temp, "--seed", "0"]);
    expect(dataset.code).toBe(2);
    expect(dataset.err.join("\n")).toMatch(/did you mean "spider"/);
    const seed = await runCli(["stream-order", "--dataset", "spider", "--data", temp, "--seed=-1"]);
    expect(seed.code).toBe(2);
    expect(seed.err.join("\n")).toMatch(/--seed must be a non-negative integer/);
  });
});

// Tests `--order KIND` (lib/cli/run.ts withOrder, lib/cli/stream-order.ts): `merit run` and `merit
// grid` override the config's `order` with it (random leaves it out, as parseConfig does), refuse an
// unknown kind in one line naming the kinds; the run's identity (config.json) carries the order, so a
// resume under another order is refused; `merit stream-order --order KIND` prints that order.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gridCommand, runCommand, withOrder } from "../../lib/cli/run.ts";
import { streamOrderCommand } from "../../lib/cli/stream-order.ts";
import { parseExamples, assertAllValid } from "../../lib/data/index.ts";
import { configHash, parseConfig } from "../../lib/experiment/config.ts";
import { checkRunDir, runIdentity, type RunSpec } from "../../lib/experiment/run.ts";
import { ORDER_KINDS, streamOrder, structuredOrder } from "../../lib/experiment/stream-order.ts";
import { canonicalJson, type JsonValue } from "../../lib/hash.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-order-flag-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const base = { dataset: "spider", data_dir: "data/spider", initial_cache: "c.jsonl" };
const KINDS = /--order must be one of random, by_database, easy_to_hard, hard_to_easy, drift, got "alphabetical"/;

describe("--order on merit run and merit grid", () => {
  it("overrides the config's order; random is left out of the config; absent keeps the config's", () => {
    const clustered = parseConfig({ ...base, order: "by_database" });
    expect(withOrder(clustered, undefined)).toBe(clustered);
    expect(withOrder(clustered, "drift").order).toBe("drift");
    const random = withOrder(clustered, "random");
    expect("order" in random).toBe(false);
    expect(configHash(random)).toBe(configHash(parseConfig(base)));
    expect(withOrder(parseConfig(base), "easy_to_hard")).toEqual(parseConfig({ ...base, order: "easy_to_hard" }));
    expect(() => withOrder(clustered, "alphabetical")).toThrow(KINDS);
  });

  it("refuses an unknown kind in one line naming the kinds, before any model loads", async () => {
    const config = join(root, "config.json");
    writeFileSync(config, JSON.stringify(base));
    const sink = { out: () => {}, err: () => {} };
    for (const [command, args] of [[runCommand, ["--method", "merit", "--seed", "0"]], [gridCommand, ["--methods", "merit"]]] as const) {
      const error = await command.run(["--config", config, ...args, "--order", "alphabetical", "--out", join(root, "never")], sink).then(() => null, (e: Error) => e);
      expect(error?.message).toMatch(KINDS);
      expect(error?.message.split("\n")).toHaveLength(1);
    }
  });

  it("the order is part of the run's identity: a resume under another order is refused, naming it", () => {
    const dir = join(root, "run");
    mkdirSync(dir);
    const spec = (order?: string): RunSpec => ({ config: withOrder(parseConfig(base), order), method: "merit", seed: 0, limit: null });
    writeFileSync(join(dir, "config.json"), canonicalJson(runIdentity(spec("by_database")) as unknown as JsonValue) + "\n");
    expect(() => checkRunDir(dir, spec("by_database"), true)).not.toThrow();
    expect(() => checkRunDir(dir, spec("drift"), true)).toThrow(/holds a run with a different config\.order \("by_database" in its config\.json, "drift" now\)/);
    expect(() => checkRunDir(dir, spec(), true)).toThrow(/holds a run with a different config\.order/);
  });
});

describe("merit stream-order --order", () => {
  const print = async (...args: string[]) => {
    const out: string[] = [];
    expect(await streamOrderCommand.run(["--dataset", "spider", "--data", SPIDER_DIR, "--seed", "1", ...args], { out: (l) => out.push(l), err: () => {} })).toBe(0);
    return JSON.parse(out.join("")) as number[];
  };
  it("prints the structured order of each kind; random (and no flag) the shuffle", async () => {
    const file = join(SPIDER_DIR, "dev.json");
    const examples = assertAllValid(parseExamples(JSON.parse(readFileSync(file, "utf8")), "spider", file), file);
    const shuffle = streamOrder(examples.length, 1);
    expect(await print()).toEqual(shuffle);
    expect(await print("--order", "random")).toEqual(shuffle);
    for (const kind of ["by_database", "drift"] as const) {
      const order = await print("--order", kind);
      expect(order).toEqual(structuredOrder(examples, 1, kind));
      expect(order).not.toEqual(shuffle);
    }
    // the bundled Spider dev.json carries no hardness: the difficulty orders are refused as a run refuses them
    for (const kind of ["easy_to_hard", "hard_to_easy"]) await expect(print("--order", kind)).rejects.toThrow(/no example has a known difficulty/);
    expect(ORDER_KINDS).toEqual(["random", "by_database", "easy_to_hard", "hard_to_easy", "drift"]);
  });
  it("refuses an unknown kind in one line naming the kinds", async () => {
    await expect(streamOrderCommand.run(["--dataset", "spider", "--seed", "0", "--order", "alphabetical"], { out: () => {}, err: () => {} })).rejects.toThrow(KINDS);
  });
});

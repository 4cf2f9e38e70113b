// Which plugin registered what (lib/registry.ts origins, lib/methods/plugin-use.ts `pluginsUsedBy`):
// every entry registered while a plugin file is imported is that file's, the kit's own entries have
// no origin, and a run's manifest lists only the plugins whose registrations its method (with its
// memory's ranker), dataset, executor or engine use.
import { describe, expect, it } from "vitest";
import { loadPlugins, pluginsUsedBy, registryUses } from "../../lib/methods/index.ts";
import { registrationOrigin, registrationsOf } from "../../lib/registry.ts";

const REVERSE = "test/fixtures/plugins/reverse.ts";
const DATASET = "test/fixtures/plugins/dataset.ts";

describe("plugin origins", () => {
  it("attributes each registration to the plugin being imported, and none of the kit's", async () => {
    const records = await loadPlugins([REVERSE, DATASET]);
    expect(registrationsOf(REVERSE)).toEqual(['ranker "newest_first"', 'method "newest_first"']);
    expect(registrationsOf(DATASET)).toEqual(['dataset "spider-plugin"']);
    // dataset.ts imports lib/data/datasets/spider.ts: Spider stays the kit's
    expect(registrationOrigin("dataset", "spider")).toBeNull();
    expect(registrationOrigin("method", "merit")).toBeNull();
    expect(registrationOrigin("executor", "sqlite")).toBeNull();

    const use = { dataset: "spider", executor: "sqlite", engine: null };
    expect(pluginsUsedBy(records, { ...use, method: "merit" })).toEqual([]);
    expect(pluginsUsedBy(records, { ...use, method: "newest_first" })).toEqual([records[0]]);
    expect(pluginsUsedBy(records, { ...use, method: "zeroshot", dataset: "spider-plugin" })).toEqual([records[1]]);
    expect(pluginsUsedBy(records, { ...use, method: "newest_first", dataset: "spider-plugin" })).toEqual(records);
    expect(registryUses({ ...use, method: "merit_full", engine: "vllm" })).toEqual([
      ["method", "merit_full"], ["method", "merit"], ["dataset", "spider"], ["executor", "sqlite"],
      ["ranker", "hybrid"], ["inference engine", "vllm"],
    ]);
  });
});

// A dataset none of whose databases is there (bench/fault-probes.ts "source-other-dataset", a BIRD
// study without `make data-bird`): every query was dropped from the stream, `study plan` said
// "0 queries per stream" and `study run` failed at the end with "runMetrics: the run has no
// trajectories", far from the cause. The stream now refuses in one line naming the dataset and the download.
import { describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { buildStream } from "../../lib/experiment/stream.ts";
import { loadSpider } from "../helpers/run-fixture.ts";

const noDatabase = (dataset: Dataset): InitialCache => ({ records: dataset.examples.map((e) => ({ query_id: e.id, execution_status: "NO_DATABASE" })) }) as unknown as InitialCache;

describe("a dataset without its databases", () => {
  it("is refused in one line naming the dataset and the download", async () => {
    const spider = await loadSpider();
    const bird = { ...spider, name: "bird", dir: "data/bird", databases: new Map() } as unknown as Dataset;
    expect(() => buildStream(bird, noDatabase(bird), 0, 8)).toThrow(`dataset bird (data/bird): none of its ${spider.examples.length} queries can be scored, as none of their databases is there; download them (\`make data-bird\``);
  });

  it("a dataset with some databases keeps the queries it can score", async () => {
    const spider = await loadSpider();
    const some = { ...spider, databases: new Map([...spider.databases].slice(0, 1)) } as Dataset;
    const cache = { records: spider.examples.map((e) => ({ query_id: e.id, execution_status: "EXECUTION_ERROR", oracle_correct: false })) } as unknown as InitialCache;
    expect(buildStream(some, cache, 0).length).toBe(spider.examples.filter((e) => some.databases.has(e.dbId)).length);
  });
});

/**
 * Dataset adapter: Spider 1.0 dev (METHOD.md §1.1–§1.3, §2.3): `dev.json` records keyed `query`,
 * `hardness`; flat primary keys; scored with the test-suite semantics under a Spider protocol.
 * @module
 */
import { registerDataset } from "../dataset-registry.ts";

export const spider = registerDataset({
  name: "spider",
  title: "Spider dev",
  layout: { examples: "dev.json", tables: "tables.json", databaseRoot: "database", gold: "dev_gold.sql" },
  record: { question: "question", gold: "query", difficulty: "hardness" },
  compositePrimaryKeys: false,
  promptFamily: "spider",
  promptContext: () => ({}),
  scoring: { semantics: "test-suite", protocolChoice: true, protocolId: (protocol, dataset = "spider") => `${dataset}-test-suite-${protocol}-v1` },
  testSuiteDatabases: true,
  downloadHint: "run `merit data download spider` on a machine with internet",
  dataCommand: "make data-spider",
});

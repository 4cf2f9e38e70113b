/**
 * Dataset adapter: Spider-Syn dev (Gan et al., ACL 2021, "Towards Robustness of Text-to-SQL Models
 * against Synonym Substitution"; data/spider-syn/PROVENANCE.md). Spider dev's 1,034 questions in
 * Spider dev order with schema words replaced by synonyms (`SpiderSynQuestion`); its own `query` is
 * the gold SQL. Schemas, databases, prompts and scoring are Spider's (METHOD.md §1.1–§1.3, §2.3).
 * @module
 */
import { registerDataset } from "../dataset-registry.ts";

export const spiderSyn = registerDataset({
  name: "spider-syn",
  title: "Spider-Syn dev",
  layout: { examples: "dev.json", tables: "../spider/tables.json", databaseRoot: "../spider/database" },
  record: { question: "SpiderSynQuestion", gold: "query" },
  compositePrimaryKeys: false,
  promptFamily: "spider",
  promptContext: () => ({}),
  scoring: { semantics: "test-suite", protocolChoice: true, protocolId: (protocol) => `spider-test-suite-${protocol}-v1` },
  testSuiteDatabases: true,
  downloadHint: "its questions are bundled in data/spider-syn; Spider's files must be in the sibling data/spider (`merit data download spider`)",
  dataCommand: "make data-spider",
});

/**
 * Dataset adapter: Spider-DK (Gan et al., EMNLP 2021, "Exploring Underexplored Limitations of
 * Cross-Domain Text-to-SQL Generalization"; data/spider-dk/PROVENANCE.md). 535 Spider dev questions
 * that need domain knowledge, records `{type, db_id, query, question}`. As its README says, its
 * databases (three modified ones, `new_*`) are merged with Spider's — here by searching its own
 * `database/` and then the sibling `../spider/database` — and its own `tables.json` replaces Spider's.
 * Prompts and scoring are Spider's (METHOD.md §1.1–§1.3, §2.3).
 * @module
 */
import { registerDataset } from "../dataset-registry.ts";

export const spiderDk = registerDataset({
  name: "spider-dk",
  title: "Spider-DK",
  layout: { examples: "Spider-DK.json", tables: "tables.json", databaseRoot: "database", extraDatabaseRoots: ["../spider/database"] },
  record: { question: "question", gold: "query" },
  compositePrimaryKeys: false,
  promptFamily: "spider",
  promptContext: () => ({}),
  scoring: { semantics: "test-suite", protocolChoice: true, protocolId: (protocol) => `spider-test-suite-${protocol}-v1` },
  testSuiteDatabases: false,
  downloadHint: "its questions, schemas and new_* databases are bundled in data/spider-dk; Spider's databases must be in the sibling data/spider (`merit data download spider`)",
  dataCommand: "make data-spider",
});

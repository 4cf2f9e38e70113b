/**
 * Dataset adapter: BIRD dev (METHOD.md §1.1–§1.3, §2.4): records keyed `question_id`, `SQL`, `evidence`,
 * `difficulty`; composite primary keys; scored with set semantics (one protocol); evidence in prompts.
 * @module
 */
import { registerDataset } from "../dataset-registry.ts";

export const bird = registerDataset({
  name: "bird",
  title: "BIRD dev",
  layout: { examples: "dev.json", tables: "dev_tables.json", databaseRoot: "dev_databases", gold: "dev.sql" },
  record: { question: "question", gold: "SQL", evidence: "evidence", difficulty: "difficulty" },
  compositePrimaryKeys: true,
  promptFamily: "bird",
  promptContext: (q) => ({ evidence: q.evidence.trim() }),
  scoring: { semantics: "set", protocolChoice: false, noProtocolChoice: "--protocol applies to Spider only; BIRD has one protocol (set semantics)", protocolId: (_protocol, dataset = "bird") => `${dataset}-set-v1` },
  testSuiteDatabases: false,
  downloadHint: "run `merit data download bird` on a machine with internet",
  dataCommand: "make data-bird",
});

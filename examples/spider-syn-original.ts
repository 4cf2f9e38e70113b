/**
 * Example plugin, the dataset seam (issue 21 §1): dataset `spider-syn-original`, Spider-Syn's 1,034
 * records (data/spider-syn/dev.json) read with their ORIGINAL Spider question (`SpiderQuestion`)
 * instead of the synonym-substituted one (`SpiderSynQuestion`), with nothing in lib/ changed. It is
 * the control a Spider-Syn robustness study needs: the same records, gold SQL, schemas, databases,
 * stream orders and scoring, with only the question wording changed back, so a difference in EX
 * between `spider-syn` and `spider-syn-original` is the synonyms' effect alone (and Spider-Syn's own
 * `query` is the gold, not Spider's dev_gold.sql). Every path is relative to this dataset's default
 * folder `data/spider-syn-original`, which need not exist: it reuses Spider-Syn's and Spider's files.
 *
 * Run: `merit eval --plugin examples/spider-syn-original.ts --dataset spider-syn-original --pred FILE`,
 * `merit stream-order --plugin examples/spider-syn-original.ts --dataset spider-syn-original --seed 0`, or any
 * command with `"dataset": "spider-syn-original"` and `"plugins": ["examples/spider-syn-original.ts"]` in its config. Test: `npx vitest run
 * examples/spider-syn-original.test.ts`.
 * @module
 */
import { registerDataset } from "../lib/plugin.ts";

registerDataset({
  name: "spider-syn-original",
  title: "Spider-Syn dev, original Spider questions (control)",
  layout: { examples: "../spider-syn/dev.json", tables: "../spider/tables.json", databaseRoot: "../spider/database" },
  record: { question: "SpiderQuestion", gold: "query" },
  compositePrimaryKeys: false,
  promptFamily: "spider",
  promptContext: () => ({}),
  scoring: { semantics: "test-suite", protocolChoice: true, protocolId: (protocol) => `spider-test-suite-${protocol}-v1` },
  testSuiteDatabases: true,
  downloadHint: "its questions are Spider-Syn's, bundled in data/spider-syn; Spider's files must be in data/spider (`merit data download spider`)",
  dataCommand: "make data-spider",
});

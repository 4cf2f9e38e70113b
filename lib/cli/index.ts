/**
 * The registry of `merit` sub-commands: one line per command, in `merit help` order.
 * A new command is a file under lib/cli/ plus one line in COMMANDS and its summary in SUMMARIES.
 * @module
 */
import type { Command } from "./command.ts";

/** Lazy loaders so `merit <cmd>` only imports what that command needs (native addons load slowly). */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  eval: async () => (await import("./eval.ts")).evalCommand,
  demo: async () => (await import("./demo.ts")).demoCommand,
  data: async () => (await import("./data.ts")).dataCommand,
  initial: async () => (await import("./initial.ts")).initialCommand,
  run: async () => (await import("./run.ts")).runCommand,
  grid: async () => (await import("./run.ts")).gridCommand,
  methods: async () => (await import("./methods.ts")).methodsCommand,
  audit: async () => (await import("./audit.ts")).auditCommand,
  report: async () => (await import("./report.ts")).reportCommand,
  annotate: async () => (await import("./annotate.ts")).annotateCommand,
  "stream-order": async () => (await import("./stream-order.ts")).streamOrderCommand,
  classify: async () => (await import("./classify.ts")).classifyCommand,
  cache: async () => (await import("./cache.ts")).cacheCommand,
  models: async () => (await import("./models.ts")).modelsCommand,
  preflight: async () => (await import("./preflight.ts")).preflightCommand,
  study: async () => (await import("./study.ts")).studyCommand,
};

/**
 * Each command's one-line summary (its `summary`), so `merit help` imports no command module — and so
 * no native add-on, which an interrupted `npm ci` may have left out. test/cli/help-imports.test.ts
 * checks that every command has one equal to its module's.
 */
export const SUMMARIES: Record<string, string> = {
  eval: "score a predictions file with the execution oracle (EX)",
  demo: "the main job on the bundled data (EX table, initial cache, four methods x three seeds, audit, report)",
  data: "download official Spider/BIRD archives; show what a dataset directory holds",
  initial: "build the shared initial cache (from the model or a predictions file)",
  run: "run one method over one stream order (crash-safe, resumable)",
  grid: "run many (method, seed) streams at once on one loaded model (--plan: count its LLM calls first)",
  methods: "list the registered methods and their hooks (with --plugin files)",
  audit: "causal audit of a run directory (prints the number of violations)",
  report: "write the paper's tables and figures from finished runs (METHOD.md §9)",
  annotate: "export a seeded sample of initially failed cases for classifier validation (METHOD.md §8)",
  "stream-order": "print the CPython-exact stream order of a dataset for a seed (JSON array of indices)",
  classify: "add the deterministic failure type (METHOD.md §3) to each line of a JSONL file",
  cache: "stats, verify, prune or merge an LLM call-cache file (calls and embeddings)",
  models: "download and verify the GGUF models (make models), or check model files",
  preflight: "check that the inputs of make reproduce (models, databases) are present",
  study: "a follow-up study in one file: new (from the template), plan (runs, calls, power), run (grid, audit, report)",
};

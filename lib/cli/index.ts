/**
 * The registry of `merit` sub-commands: one line per command, in `merit help` order.
 * A new command is a file under lib/cli/ plus one line here.
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

/**
 * `merit demo` (`make demo`, `make demo-peers`): parses the flags of the library's `runDemo`
 * (lib/report/demo.ts: the bundled predictions' EX, the shared initial cache, the methods over stream
 * orders 0-2, the causal audit and the report) and prints its narrative; `--save-cache` copies the
 * working call cache to the committed replay file (lib/experiment/replay-cache.ts).
 * @module
 */
import { UsageError } from "../errors.ts";
import { REPLAY_CACHE, saveReplayCache } from "../experiment/replay-cache.ts";
import { TINY_CACHE } from "../experiment/quick-config.ts";
import { FULL_LIMIT, FULL_REPORT_DIR, MAIN_DEMO, PEERS_DEMO, QUICK_LIMIT, runDemo } from "../report/demo.ts";
import { numberFlag, parseFlags, type Command, type CommandIO } from "./command.ts";
import { pluginFlagFiles, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { cliReporter } from "./progress.ts";

const USAGE = `usage: merit demo [--peers] [--full] [--fresh] [--limit N] [--config FILE] [--skip-runs] [--save-cache] [--plugin FILE.ts ...]
  The main job on the bundled data: EX of the bundled predictions, the shared initial cache from
  the DeepSeek-Coder-7B predictions, iterative / reflexion / dynamic_rag / merit over stream orders
  0-2 on N queries chosen by the config's subset rule (configs/demo.json: mostly initially failed
  ones), the causal audit, and the report. Runs go to runs/demo/, the report to results/demo/.
  Quick by default: the tiny random test models (meaningless numbers, real mechanics), N = ${QUICK_LIMIT},
  every model call replayed from ${REPLAY_CACHE}, so results/demo is rewritten byte for byte
  on any CPU.
  --full        the real GGUFs of models/ (make models), N = ${FULL_LIMIT}, runs in runs/demo/qwen and the
                report in ${FULL_REPORT_DIR}; prints the plan and an estimate first (hours on a CPU)
  --fresh       delete runs/demo/ first and recompute every model call into an empty call cache
  --save-cache  copy the quick demo's working cache (${TINY_CACHE}) to ${REPLAY_CACHE}
                and stop: after \`merit demo --fresh\` and \`make notebooks\`, to refresh the replay
  --skip-runs   only score the bundled predictions
  --peers       the peers demo instead (make demo-peers): merit and the nine peer memory methods
                (reasoning_bank ... error_fix_memory, METHOD.md §13) and the equal-budget control over
                stream orders 0-2 on 100 queries (90 initially failed) with K = 3 (configs/demo-peers.json)
                on the SIMULATED ENGINE (configs/simulated-engine.json: effects planted, not measured;
                docs/METHOD.md "Simulated engine"), so every memory writes and retrieves notes; nothing is
                replayed (the engine answers from (seed, prompt)); runs in runs/demo-peers/simulated, the
                report (peers table, Pareto figure, learning curves, memory diagnostics) in
                results/demo-peers/, then the engine's counts per method; no step 1 (the bundled
                predictions are the main demo's)
${PLUGIN_USAGE}`;
export const demoCommand: Command = {
  name: "demo",
  summary: "the main job on the bundled data (EX table, initial cache, four methods x three seeds, audit, report)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(
      argv,
      { limit: { type: "string" }, config: { type: "string" }, fresh: { type: "boolean" }, peers: { type: "boolean" }, full: { type: "boolean" }, "skip-runs": { type: "boolean" }, "save-cache": { type: "boolean" }, ...PLUGIN_FLAG },
      USAGE,
    );
    const profile = values.peers ? PEERS_DEMO : MAIN_DEMO;
    if (values["save-cache"]) {
      const other = Object.keys(values).find((k) => k !== "save-cache" && k !== "peers");
      if (other) throw new UsageError(`--save-cache takes no other flag (got --${other}) but --peers (the peers demo's cache); see merit demo --help`);
      if (profile.replayCache === null) throw new UsageError(`--peers runs on the simulated engine, which answers every call itself: there is no call cache to save; see merit demo --help`);
      const rows = saveReplayCache(profile.workingCache, profile.replayCache);
      io.out(`wrote ${profile.replayCache}: ${rows} model calls from ${profile.workingCache}`);
      return 0;
    }
    if (values.peers && (values.full || values["skip-runs"])) throw new UsageError(`--peers runs the quick peers demo only (got --${values.full ? "full" : "skip-runs"}); see merit demo --help`);
    const limit = values.limit === undefined ? undefined : numberFlag(values.limit, "limit", 0, { integer: true, min: 1 });
    await runDemo({ peers: values.peers, full: values.full, fresh: values.fresh, limit, config: values.config, skipRuns: values["skip-runs"], plugins: pluginFlagFiles(values.plugin), print: (line) => io.out(line), reporter: cliReporter(io) });
    return 0;
  },
};

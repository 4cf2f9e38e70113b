/**
 * The `merit` command line: dispatches to the sub-commands registered in lib/cli/index.ts and turns
 * MeritError into one stderr line plus its exit code. The only file besides lib/cli/* that prints.
 * @module
 */
import { COMMANDS, SUMMARIES } from "./cli/index.ts";
import type { CommandIO } from "./cli/command.ts";
import { seeHelp } from "./cli/command.ts";
import { UsageError, nearestName, userFixableError } from "./errors.ts";


/** Streams whose reader went away (`merit report … | head`): further lines are dropped, not an error. */
const closed = new Set<NodeJS.WriteStream>();

const consoleIO: CommandIO = {
  out: (line) => {
    if (!closed.has(process.stdout)) process.stdout.write(line + "\n");
  },
  err: (line) => {
    if (!closed.has(process.stderr)) process.stderr.write(line + "\n");
  },
};

/**
 * Makes a closed stdout or stderr (EPIPE: the reader of a pipe exited early) end output quietly:
 * the command still finishes what it writes to files and exits with its own code (0 on success),
 * with no stack trace. lib/bin.mjs calls this once.
 */
export function quietOnClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      closed.add(stream);
    });
  }
}

/** The command list, from SUMMARIES: no command module (nor the native add-ons they import) is loaded. */
async function helpText(): Promise<string> {
  const lines = ["usage: merit <command> [flags]   (merit <command> --help for details)", "", "commands:"];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const summary = SUMMARIES[name] ?? (await load()).summary; // a command not yet listed there
    lines.push(`  ${name.padEnd(14)} ${summary}`);
  }
  return lines.join("\n");
}

/** Runs one invocation and resolves to its exit code (never throws). */
export async function main(argv: string[], io: CommandIO = consoleIO): Promise<number> {
  const [first, ...others] = argv;
  if (first === undefined || ((first === "help" || first === "--help" || first === "-h") && others.length === 0)) {
    io.out(await helpText());
    return first === undefined ? 2 : 0;
  }
  // `merit help eval` is `merit eval --help`
  const [name, ...rest] = first === "help" || first === "--help" || first === "-h" ? [others[0], "--help"] : argv;
  const load = COMMANDS[name];
  if (!load) {
    const near = nearestName(name, Object.keys(COMMANDS));
    io.err(`merit: unknown command "${name}"${near ? ` (did you mean "${near}"?)` : ""}; run \`merit help\` for the list`);
    return 2;
  }
  try {
    const command = await load();
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(command.usage);
      return 0;
    }
    return await command.run(rest, io);
  } catch (error) {
    // imported only for a failed command: it pulls in the registries (and zod), which `merit help` skips
    const { pluginHint } = await import("./cli/plugin-flag.ts");
    if (error instanceof UsageError) {
      // one line (STYLE.md §2.10): the mistake, then where the full usage is
      const line = error.message.split("\n")[0];
      io.err(`merit ${name}: ${line}${pluginHint(line, rest)}${line.includes("--help`") ? "" : seeHelp(`usage: merit ${name}`)}`);
      return error.exitCode;
    }
    const known = userFixableError(error); // MeritError, or a full disk / bad path from node:fs or SQLite
    if (known) {
      io.err(`merit ${name}: ${known.message}${pluginHint(known.message, rest)}`);
      return known.exitCode;
    }
    io.err(`merit ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  }
}

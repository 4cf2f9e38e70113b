/**
 * The `merit` command line: dispatches to the sub-commands registered in lib/cli/index.ts and turns
 * MeritError into one stderr line plus its exit code. The only file besides lib/cli/* that prints.
 * @module
 */
import { COMMANDS } from "./cli/index.ts";
import type { CommandIO } from "./cli/command.ts";
import { nearestName, userFixableError } from "./errors.ts";

const consoleIO: CommandIO = {
  out: (line) => process.stdout.write(line + "\n"),
  err: (line) => process.stderr.write(line + "\n"),
};

async function helpText(): Promise<string> {
  const lines = ["usage: merit <command> [flags]   (merit <command> --help for details)", "", "commands:"];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const command = await load();
    lines.push(`  ${name.padEnd(14)} ${command.summary}`);
  }
  return lines.join("\n");
}

/** Runs one invocation and resolves to its exit code (never throws). */
export async function main(argv: string[], io: CommandIO = consoleIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    io.out(await helpText());
    return name === undefined ? 2 : 0;
  }
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
    const known = userFixableError(error); // MeritError, or a full disk / bad path from node:fs or SQLite
    if (known) {
      io.err(`merit ${name}: ${known.message}`);
      return known.exitCode;
    }
    io.err(`merit ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  }
}

// Test runner configuration: node environment, one fork pool (native addons), long timeouts for real-data suites.
// The timeouts below are the floor: test/helpers/budget-setup.ts scales them in every test process by
// the machine's measured slowdown (test/helpers/budget.ts; README "Slow tests"), so a busy machine
// gets longer bounds instead of failing tests.
// MERIT_TEST_FAST=1 (`make test-fast`) leaves out the files that start real servers, a Slurm cluster
// or a browser — those whose first line is a `// SLOW:` comment saying why (README "Slow tests").
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { DEFAULT_TIMEOUT_MS } from "./test/helpers/budget.ts";

/** Test files whose first line is `// SLOW: …`. */
function slowTestFiles(): string[] {
  return ["test", "studies", "examples"].flatMap((dir) =>
    (readdirSync(dir, { recursive: true }) as string[])
      .map((f) => join(dir, f))
      .filter((f) => f.endsWith(".test.ts") && readFileSync(f, "utf8").startsWith("// SLOW:")),
  );
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "studies/**/*.test.ts", "examples/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(process.env.MERIT_TEST_FAST === "1" ? slowTestFiles() : [])],
    environment: "node",
    pool: "forks",
    setupFiles: ["test/helpers/budget-setup.ts"],
    testTimeout: DEFAULT_TIMEOUT_MS,
    hookTimeout: DEFAULT_TIMEOUT_MS,
    maxWorkers: 2,
  },
});

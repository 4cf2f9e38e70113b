// Test runner configuration: node environment, one fork pool (native addons), long timeouts for real-data suites.
// The timeouts below are the floor: test/helpers/budget-setup.ts scales them in every test process by
// the machine's measured slowdown (test/helpers/budget.ts; README "Slow tests"), so a busy machine
// gets longer bounds instead of failing tests.
import { defineConfig } from "vitest/config";
import { DEFAULT_TIMEOUT_MS } from "./test/helpers/budget.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "studies/**/*.test.ts", "examples/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    setupFiles: ["test/helpers/budget-setup.ts"],
    testTimeout: DEFAULT_TIMEOUT_MS,
    hookTimeout: DEFAULT_TIMEOUT_MS,
    maxWorkers: 2,
  },
});

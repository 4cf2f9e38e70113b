// Test runner configuration: node environment, one fork pool (native addons), long timeouts for real-data suites.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "studies/**/*.test.ts", "examples/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});

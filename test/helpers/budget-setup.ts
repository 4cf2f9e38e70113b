// Vitest setup file (vitest.config.ts setupFiles): every test file's default testTimeout and
// hookTimeout are DEFAULT_TIMEOUT_MS scaled by this machine's measured slowdown (test/helpers/budget.ts).
import { vi } from "vitest";
import { budget, DEFAULT_TIMEOUT_MS } from "./budget.ts";

vi.setConfig({ testTimeout: budget(DEFAULT_TIMEOUT_MS), hookTimeout: budget(DEFAULT_TIMEOUT_MS) });

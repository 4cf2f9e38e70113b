// Prints the closing line CI reads (`N passed, N failed`) from vitest's JSON report(s).
import { readFileSync, existsSync } from "node:fs";

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.error(`test summary: ${file} was not written (the test runner crashed before reporting)`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  if (report.numFailedTestSuites && !report.numFailedTests) failed += report.numFailedTestSuites;
}
console.log(`${passed} passed, ${failed} failed`);

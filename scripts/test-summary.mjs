#!/usr/bin/env node
// Prints the one line CI reads, `N passed, M failed`, from vitest's JSON reports: the first
// argument is the main run's report, the second the exit status of the whole, and any more are
// reports of further runs (the encoder's tests with the npm-packaged ffmpeg), counted in the same
// line. A run that failed before vitest could report (install, types, lint) counts as one failure
// rather than zero.
import { existsSync, readFileSync } from "node:fs";

const [reportPath = ".vitest/report.json", exitCode = "0", ...more] = process.argv.slice(2);
let passed = 0;
let failed = 0;
for (const path of [reportPath, ...more]) {
  if (!existsSync(path)) continue;
  const report = JSON.parse(readFileSync(path, "utf8"));
  const failedTests = report.numFailedTests ?? 0;
  passed += report.numPassedTests ?? 0;
  failed += failedTests === 0 && report.numFailedTestSuites > 0 ? report.numFailedTestSuites : failedTests;
}
if (exitCode !== "0" && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);

#!/usr/bin/env node
// Prints the one line CI reads, `N passed, M failed`, from vitest's JSON report. A run that failed
// before vitest could report (install, types, lint) counts as one failure rather than zero.
import { existsSync, readFileSync } from "node:fs";

const [reportPath = ".vitest/report.json", exitCode = "0"] = process.argv.slice(2);
let passed = 0;
let failed = 0;
if (existsSync(reportPath)) {
  const report = JSON.parse(readFileSync(reportPath, "utf8"));
  passed = report.numPassedTests ?? 0;
  failed = report.numFailedTests ?? 0;
  if (report.numFailedTestSuites > 0 && failed === 0) failed = report.numFailedTestSuites;
}
if (exitCode !== "0" && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
/** test/client's own package (a `file:` devDependency), whose one dependency is that TypeScript. */
const client = path.join(root, "test/client");
const manifest = JSON.parse(readFileSync(path.join(client, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

/** The oldest TypeScript the README promises the generated client compiles with. */
const CLAIMED = /generated client needs TypeScript (\d+\.\d+) or newer/.exec(readme)?.[1];

describe("the generated client (openapi-typescript + openapi-fetch) with the TypeScript the README names", () => {
  it("is the version test/client installs", () => {
    expect(CLAIMED, "README: 'generated client needs TypeScript X.Y or newer'").toBeDefined();
    expect(manifest.dependencies.typescript).toMatch(new RegExp(`^${CLAIMED}\\.\\d+$`));
    const installed = JSON.parse(readFileSync(path.join(client, "node_modules/typescript/package.json"), "utf8")) as {
      version: string;
    };
    expect(installed.version).toBe(manifest.dependencies.typescript);
  });

  it("compiles a program written against it, library types checked, with that version", () => {
    const tsc = path.join(client, "node_modules/typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", "test/client/tsconfig.json"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, 60_000);
});

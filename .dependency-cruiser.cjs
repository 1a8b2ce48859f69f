/**
 * The import graph reads top-down (docs/conventions.md#the-import-graph-reads-top-down): routes at
 * the top, capabilities below, `http/` and `lib/` at the ground. `npm test` runs this check
 * (`npm run arch`).
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle: two modules that each need the other should be one, or share a lower one.",
      from: {},
      to: { circular: true },
    },
    {
      name: "ground-imports-no-capability",
      severity: "error",
      comment: "lib/ and http/ are the ground floor: they know no capability.",
      from: { path: "^src/(lib|http)/" },
      to: { path: "^src/", pathNot: "^src/(lib|http|config\\.ts)" },
    },
    {
      name: "routes-are-leaves",
      severity: "error",
      comment: "A route module (`*routes.ts`) is imported only by the composition root (src/app.ts).",
      from: { path: "^src/", pathNot: "^src/app\\.ts$" },
      to: { path: "routes\\.ts$" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "worker-configuration\\.d\\.ts" },
  },
};

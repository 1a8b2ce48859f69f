import { describe, expect, it } from "vitest";
import { folderCycles, folderOf } from "../../scripts/folder-cycles.mjs";

/** A dependency-cruiser module: its file and what it imports. */
const mod = (source: string, ...imports: string[]) => ({
  source,
  dependencies: imports.map((resolved) => ({ resolved })),
});

describe("folder cycles (npm run arch)", () => {
  it("names a module by its top folder under src/, or itself when directly in src/", () => {
    expect(folderOf("src/videos/model.ts")).toBe("videos");
    expect(folderOf("src/encoding/pipeline/pool.ts")).toBe("encoding");
    expect(folderOf("src/app.ts")).toBe("app.ts");
    expect(folderOf("node_modules/hono/index.js")).toBeNull();
  });

  it("finds two folders that import each other through different files, with the imports that close it", () => {
    const cycles = folderCycles([
      mod("src/videos/present.ts", "src/playback/urls.ts"),
      mod("src/playback/routes.ts", "src/videos/model.ts"),
      mod("src/playback/urls.ts"),
      mod("src/videos/model.ts"),
    ]);
    expect(cycles).toEqual([
      {
        folders: ["playback", "videos"],
        imports: expect.arrayContaining([
          "src/videos/present.ts → src/playback/urls.ts",
          "src/playback/routes.ts → src/videos/model.ts",
        ]),
      },
    ]);
  });

  it("finds a longer circle as one group, and nothing in a graph that reads top-down", () => {
    const circle = folderCycles([
      mod("src/auth/middleware.ts", "src/api-keys/queries.ts"),
      mod("src/api-keys/routes.ts", "src/rate-limit/middleware.ts"),
      mod("src/rate-limit/middleware.ts", "src/auth/context.ts"),
    ]);
    expect(circle.map((cycle) => cycle.folders)).toEqual([["api-keys", "auth", "rate-limit"]]);
    const layered = folderCycles([
      mod("src/app.ts", "src/videos/routes.ts", "src/uploads/routes.ts"),
      mod("src/uploads/routes.ts", "src/videos/model.ts", "src/lib/db.ts"),
      mod("src/videos/routes.ts", "src/lib/db.ts"),
      mod("src/videos/model.ts", "src/lib/db.ts", "node_modules/hono/index.js"),
    ]);
    expect(layered).toEqual([]);
  });
});

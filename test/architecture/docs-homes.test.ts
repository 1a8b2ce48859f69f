import { describe, expect, it } from "vitest";
import { mapPath, missingHomes } from "../../scripts/docs-homes.mjs";

describe("the docs check (npm run arch)", () => {
  const map = "src/videos/   videos\nsrc/app.ts   the root\n| `/v1/videos/{id}` | GET | src/videos/routes.ts |\n";

  it("passes when every folder and every path served has a home in the map", () => {
    expect(missingHomes(map, { entries: ["videos/", "app.ts"], paths: ["/v1/videos/:id", "/v1/videos/:id"] })).toEqual({
      folders: [],
      routes: [],
    });
  });

  it("fails on a folder of src/ the map does not name, and on a path its route table does not list", () => {
    expect(
      missingHomes(map, { entries: ["videos/", "audio/"], paths: ["/v1/videos/:id", "/v1/videos/:id/audio"] }),
    ).toEqual({
      folders: ["audio/"],
      routes: ["/v1/videos/{id}/audio"],
    });
  });

  it("writes the router's parameters as the API reference does, patterns left out", () => {
    expect(mapPath("/internal/encoding/:projectId/:jobId/:file{mp4|m4a}/parts/:part")).toBe(
      "/internal/encoding/{projectId}/{jobId}/{file}/parts/{part}",
    );
    expect(mapPath("/play/:subject/*")).toBe("/play/{subject}/*");
  });
});

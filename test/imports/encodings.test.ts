import { describe, expect, it } from "vitest";
import { runImport } from "../../src/imports/run";
import { patternedBytes } from "../fixtures/bytes";
import {
  expectFailed,
  expectSameBytes,
  fakeOrigin,
  file,
  importOf,
  MiB,
  partsOf,
  rowOf,
  sourceBytes,
  testDeps,
  URL_A,
} from "./support";

/**
 * An origin answering with a Content-Encoding is imported as the bytes it means (docs/imports.md,
 * "Compressed answers"). The fake origin sends what the Workers runtime's fetch hands over, as
 * measured: gzip and br decoded (with the encoded Content-Length), deflate as sent.
 */
describe("an origin that compresses its answer", () => {
  it.each(["gzip", "br", "deflate"] as const)("is imported as the bytes it means: %s", async (coding) => {
    const { id } = await importOf();
    const bytes = patternedBytes(6 * MiB + 5);
    const origin = fakeOrigin({ [URL_A]: file(bytes, { encoding: { coding } }) });
    const { deps } = testDeps(origin.fetch);
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(await partsOf(id)).toEqual([5 * MiB, MiB + 5]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("asks for the file as stored (Accept-Encoding: identity), which an origin that honours it sends resumable", async () => {
    const { id } = await importOf();
    const seen: (string | null)[] = [];
    const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      seen.push(request.headers.get("accept-encoding"));
      return file(patternedBytes(MiB))(request, 1);
    }) as typeof fetch;
    const { deps } = testDeps(fetcher);
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(seen).toEqual(["identity"]);
  });

  it("fails a coding this service cannot decode, naming it", async () => {
    const { id } = await importOf();
    const origin = fakeOrigin({ [URL_A]: file(patternedBytes(MiB), { encoding: { coding: "zstd" } }) });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("failed");
    await expectFailed(
      id,
      "The import failed: the origin sent the file encoded as zstd, which this service cannot decode.",
    );
  });

  it("never appends a range of encoded bytes: a compressed body that broke is fetched again whole", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    const origin = fakeOrigin({
      [URL_A]: file(bytes, { encoding: { coding: "gzip" }, breakAt: { hits: [1], at: 7 * MiB } }),
    });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("retry");
    expect(await partsOf(id)).toEqual([5 * MiB]);
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    // The Range was answered with a range of the gzip stream (206, Content-Encoding: gzip): the run
    // asked again for the whole file, and started again from its first byte.
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${5 * MiB}-`, null]);
    expect(await partsOf(id)).toEqual([5 * MiB, 5 * MiB, MiB]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });

  it("goes on by Range when the origin answers the range unencoded (the identity bytes follow the decoded ones)", async () => {
    const { id } = await importOf();
    const bytes = patternedBytes(11 * MiB);
    const origin = fakeOrigin({
      [URL_A]: file(bytes, { encoding: { coding: "gzip", hits: [1] }, breakAt: { hits: [1], at: 7 * MiB } }),
    });
    const { deps } = testDeps(origin.fetch);
    expect((await runImport(deps, id)).kind).toBe("retry");
    expect(await runImport(deps, id)).toEqual({ kind: "uploaded" });
    expect(origin.hits.map((hit) => hit.range)).toEqual([null, `bytes=${5 * MiB}-`]);
    expectSameBytes(await sourceBytes((await rowOf(id)).source_key), bytes);
  });
});

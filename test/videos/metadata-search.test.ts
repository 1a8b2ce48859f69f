import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { encodingEvent } from "../../src/videos/events";
import type { Video } from "../../src/videos/video-object";
import { api, bearer, errorCode, json, newVideo, newWorkspace, type VideoBody } from "../helpers";

type Listed = { data: (VideoBody & { tags: string[]; metadata: Record<string, string> })[]; nextCursor: string | null };

async function list(key: string, query: string): Promise<Listed> {
  const response = await api(`/v1/videos?${query}`, bearer(key));
  if (response.status !== 200) throw new Error(`list ${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Listed;
}

const ids = async (key: string, query: string) => (await list(key, query)).data.map((video) => video.id);

describe("FTS5 in D1", () => {
  it("folds case and accents with unicode61 remove_diacritics 2, and matches prefixes", async () => {
    await env.DB.exec(
      "CREATE VIRTUAL TABLE IF NOT EXISTS fts_probe USING fts5(t, tokenize = 'unicode61 remove_diacritics 2')",
    );
    await env.DB.prepare("INSERT INTO fts_probe (rowid, t) VALUES (1, ?), (2, ?)")
      .bind("Crème Brûlée à Việt Nam", "Plain")
      .run();
    const match = async (query: string) =>
      (
        await env.DB.prepare("SELECT rowid FROM fts_probe WHERE fts_probe MATCH ?").bind(query).all<{ rowid: number }>()
      ).results.map((row) => row.rowid);
    expect(await match('"creme"* "BRU"*')).toEqual([1]);
    // remove_diacritics 2 folds a letter with two marks (ệ: circumflex and dot below), which 1 does not.
    expect(await match('"VIET"*')).toEqual([1]);
    expect(await match('"pla"*')).toEqual([2]);
    expect(await match('"rule"*')).toEqual([]);
  });
});

describe("tags and metadata", () => {
  it("are set on create, default to [] and {}, and show on the video", async () => {
    const { key } = await newWorkspace();
    const plain = await newVideo(key);
    expect(plain.video).toMatchObject({ tags: [], metadata: {}, allowedOrigins: [] });
    const { video } = await newVideo(key, { tags: ["launch", "ads", "launch"], metadata: { "crm.id": "42", a_b: "" } });
    expect(video).toMatchObject({ tags: ["launch", "ads"], metadata: { "crm.id": "42", a_b: "" } });
    const read = await (await api(`/v1/videos/${video.id}`, bearer(key))).json();
    expect(read).toMatchObject({ tags: ["launch", "ads"], metadata: { "crm.id": "42", a_b: "" } });
  });

  it("replaces tags and merge-patches metadata on PATCH (null removes a key)", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key, { title: "T", tags: ["a"], metadata: { keep: "1", drop: "2", change: "3" } });
    const edit = async (body: unknown) => {
      const response = await api(`/v1/videos/${video.id}`, bearer(key, json("PATCH", body)));
      expect(response.status).toBe(200);
      return (await response.json()) as Listed["data"][number];
    };
    expect(await edit({ metadata: { drop: null, change: "x", added: "y" } })).toMatchObject({
      title: "T",
      tags: ["a"],
      metadata: { keep: "1", change: "x", added: "y" },
    });
    expect((await edit({ metadata: { drop: null, change: "x", added: "y" } })).metadata).toEqual({
      keep: "1",
      change: "x",
      added: "y",
    });
    expect(await edit({ tags: ["b", "c"] })).toMatchObject({ tags: ["b", "c"], metadata: { keep: "1" } });
    expect(await edit({ title: "U" })).toMatchObject({ title: "U", tags: ["b", "c"] });
  });

  // JSON.parse gives `__proto__` as an ordinary key, and the key pattern allows it: it is a pair like any other.
  it("keeps the keys __proto__, constructor and toString as given, on create, PATCH, search and events", async () => {
    const { key } = await newWorkspace();
    const pairs = '{"__proto__": "x", "constructor": "c", "toString": "t", "plain": "p"}';
    const created = await api("/v1/videos", bearer(key, json("POST", `{"title": "T", "metadata": ${pairs}}`)));
    expect(created.status).toBe(201);
    const expected = { ["__proto__"]: "x", constructor: "c", toString: "t", plain: "p" };
    const metadataOf = async (response: Response) => {
      const body = (await response.json()) as Record<string, unknown>;
      const video = (body.video ?? body) as { metadata: Record<string, string> };
      return Object.entries(video.metadata).sort();
    };
    expect(await metadataOf(created)).toEqual(Object.entries(expected).sort());
    const id = ((await api("/v1/videos", bearer(key)).then((r) => r.json())) as Listed).data[0]?.id;
    const read = await api(`/v1/videos/${id}`, bearer(key));
    expect(await metadataOf(read)).toEqual(Object.entries(expected).sort());
    expect(await ids(key, "metadata[__proto__]=x&metadata[constructor]=c")).toEqual([id]);
    // A webhook's video is the same object, built through the event's own schema.
    const event = encodingEvent({ ...((await (await api(`/v1/videos/${id}`, bearer(key))).json()) as Video) });
    expect(Object.entries(event.data.metadata).sort()).toEqual(Object.entries(expected).sort());
    // Merge-patched: a __proto__ edited, constructor removed, toString kept.
    const patch = '{"metadata": {"__proto__": "y", "constructor": null}}';
    const edited = await api(`/v1/videos/${id}`, bearer(key, json("PATCH", patch)));
    expect(edited.status).toBe(200);
    expect(await metadataOf(edited)).toEqual(Object.entries({ ["__proto__"]: "y", toString: "t", plain: "p" }).sort());
    // The same rules as any key: a bad value under __proto__ is refused, not skipped.
    const bad = await api("/v1/videos", bearer(key, json("POST", '{"metadata": {"__proto__": 1}}')));
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("invalid_body");
    const nested = await api("/v1/videos", bearer(key, json("POST", '{"metadata": {"__proto__": {"a": "b"}}}')));
    expect(await errorCode(nested)).toBe("invalid_body");
  });

  it("counts a __proto__ pair among the 20", async () => {
    const { key } = await newWorkspace();
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, "v"]));
    const body = `{"metadata": {"__proto__": "x", ${JSON.stringify(twenty).slice(1)}}`;
    const response = await api("/v1/videos", bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("refuses a merge that would leave more than 20 pairs, changing nothing", async () => {
    const { key } = await newWorkspace();
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, "v"]));
    const { video } = await newVideo(key, { metadata: twenty });
    const response = await api(
      `/v1/videos/${video.id}`,
      bearer(key, json("PATCH", { title: "no", metadata: { more: "x" } })),
    );
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as Listed["data"][number];
    expect(read.title).toBeNull();
    expect(Object.keys(read.metadata)).toHaveLength(20);
    // Replacing a key (or removing one while adding one) stays within 20.
    const swap = await api(`/v1/videos/${video.id}`, bearer(key, json("PATCH", { metadata: { k0: null, more: "x" } })));
    expect(swap.status).toBe(200);
  });

  it.each([
    ["21 tags", { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }],
    ["an empty tag", { tags: [""] }],
    ["a tag over 50 characters", { tags: ["x".repeat(51)] }],
    ["a tag with a control character", { tags: ["a\nb"] }],
    ["a non-string tag", { tags: [1] }],
    ["21 metadata pairs", { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])) }],
    ["a metadata key with a space", { metadata: { "a b": "v" } }],
    ["a metadata key over 40 characters", { metadata: { ["k".repeat(41)]: "v" } }],
    ["an empty metadata key", { metadata: { "": "v" } }],
    ["a metadata value over 500 characters", { metadata: { k: "v".repeat(501) } }],
    ["a non-string metadata value", { metadata: { k: 1 } }],
    ["a null metadata value on create", { metadata: { k: null } }],
  ])("refuses %s with invalid_body on create", async (_, body) => {
    const { key } = await newWorkspace();
    const response = await api("/v1/videos", bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("refuses bad tags and metadata on PATCH with invalid_body", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    for (const body of [{ tags: [""] }, { metadata: { "a/b": "v" } }, { metadata: { k: 1 } }, { tags: "a" }]) {
      const response = await api(`/v1/videos/${video.id}`, bearer(key, json("PATCH", body)));
      expect(await errorCode(response)).toBe("invalid_body");
    }
  });
});

describe("GET /v1/videos search", () => {
  it("keeps videos with every tag asked for, and exact metadata pairs", async () => {
    const { key } = await newWorkspace();
    const a = (await newVideo(key, { tags: ["x", "y"], metadata: { team: "blue", "crm.id": "7" } })).video.id;
    const b = (await newVideo(key, { tags: ["x"], metadata: { team: "blue" } })).video.id;
    const c = (await newVideo(key, { tags: ["y"], metadata: { team: "red" } })).video.id;
    expect(await ids(key, "tag=x")).toEqual([b, a]);
    expect(await ids(key, "tag=x&tag=y")).toEqual([a]);
    expect(await ids(key, "tag=y")).toEqual([c, a]);
    expect(await ids(key, "tag=X")).toEqual([]);
    expect(await ids(key, "metadata[team]=blue")).toEqual([b, a]);
    expect(await ids(key, "metadata%5Bteam%5D=blue&metadata[crm.id]=7")).toEqual([a]);
    expect(await ids(key, "metadata[team]=Blue")).toEqual([]);
    expect(await ids(key, "metadata[team]=blue&tag=y")).toEqual([a]);
    expect(await ids(key, "metadata[missing]=")).toEqual([]);
  });

  it("matches title words by prefix, case- and accent-insensitively, all words required", async () => {
    const { key } = await newWorkspace();
    const cafe = (await newVideo(key, { title: "Le Café de Flore" })).video.id;
    const creme = (await newVideo(key, { title: "crème brûlée recipe" })).video.id;
    const other = (await newVideo(key, { title: "Cafeteria tour" })).video.id;
    await newVideo(key);
    expect(await ids(key, "search=cafe")).toEqual([other, cafe]);
    expect(await ids(key, "search=CAFÉ%20flo")).toEqual([cafe]);
    expect(await ids(key, `search=${encodeURIComponent("CREME brul")}`)).toEqual([creme]);
    expect(await ids(key, "search=recipe%20cafe")).toEqual([]);
    expect(await ids(key, `search=${encodeURIComponent('"caf* OR NOT')}`)).toEqual([]);
    expect(await ids(key, `search=${encodeURIComponent('"cafe')}`)).toEqual([other, cafe]);
    // A % that starts no escape is the character itself, not malformed UTF-8.
    expect(await ids(key, "search=caf%C3%A9%20flo%")).toEqual([cafe]);
    // A title edited is searched by its new words only; a deleted video is gone.
    await api(`/v1/videos/${other}`, bearer(key, json("PATCH", { title: "Museum tour" })));
    expect(await ids(key, "search=cafe")).toEqual([cafe]);
    expect(await ids(key, "search=muse")).toEqual([other]);
    await api(`/v1/videos/${cafe}`, bearer(key, { method: "DELETE" }));
    expect(await ids(key, "search=cafe")).toEqual([]);
  });

  it("searches only the caller's project", async () => {
    const one = await newWorkspace();
    const two = await newWorkspace();
    await newVideo(one.key, { title: "shared words", tags: ["t"] });
    const mine = (await newVideo(two.key, { title: "shared words", tags: ["t"] })).video.id;
    expect(await ids(two.key, "search=shared&tag=t")).toEqual([mine]);
  });

  it("keeps a creation window, each end exclusive", async () => {
    const { key } = await newWorkspace();
    const made: { id: string; createdAt: string }[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await newVideo(key)).video);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const [first, second, third] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0]];
    expect(await ids(key, `createdAfter=${first.createdAt}`)).toEqual([third.id, second.id]);
    expect(await ids(key, `createdBefore=${third.createdAt}`)).toEqual([second.id, first.id]);
    expect(await ids(key, `createdAfter=${first.createdAt}&createdBefore=${third.createdAt}`)).toEqual([second.id]);
    // Another spelling of the same instant is the same bound.
    const offset = new Date(Date.parse(first.createdAt)).toISOString().replace("Z", "+00:00");
    expect(await ids(key, `createdAfter=${encodeURIComponent(offset)}`)).toEqual([third.id, second.id]);
  });

  it("pages within the filters, and refuses a cursor made for other filters", async () => {
    const { key } = await newWorkspace();
    const tagged: string[] = [];
    for (let i = 0; i < 3; i++) tagged.push((await newVideo(key, { title: `clip ${i}`, tags: ["p"] })).video.id);
    await newVideo(key, { title: "clip other" });
    const first = await list(key, "tag=p&search=clip&limit=2");
    expect(first.data.map((v) => v.id)).toEqual([tagged[2], tagged[1]]);
    const cursor = encodeURIComponent(first.nextCursor ?? "");
    expect(await list(key, `search=clip&tag=p&limit=2&cursor=${cursor}`)).toMatchObject({
      data: [{ id: tagged[0] }],
      nextCursor: null,
    });
    for (const query of [
      "tag=p",
      "tag=p&search=cli",
      "tag=p&search=clip&metadata[a]=b",
      "tag=p&tag=q&search=clip",
      `tag=p&search=clip&createdAfter=2020-01-01T00:00:00Z`,
    ]) {
      const response = await api(`/v1/videos?${query}&limit=2&cursor=${cursor}`, bearer(key));
      expect(await errorCode(response), query).toBe("invalid_cursor");
    }
  });

  it.each([
    "tag=",
    `tag=${"x".repeat(51)}`,
    "search=",
    "search=%20!!%20",
    `search=${"w ".repeat(11)}`,
    `search=${"x".repeat(201)}`,
    "createdAfter=yesterday",
    "createdAfter=2026-13-01T00:00:00Z",
    "createdBefore=1700000000",
    "createdBefore=",
    "metadata[a%20b]=1",
    "metadata[]=1",
    "metadata[a]=1&metadata[a]=2",
    `metadata[a]=${"v".repeat(501)}`,
    "metadata=",
    "metadata=team",
    // Impossible calendar dates, which Date.parse would roll over into the next month.
    "createdAfter=2026-02-30",
    "createdAfter=2026-02-29T00:00:00Z",
    "createdBefore=2026-04-31T12:00:00.000Z",
    "createdBefore=2026-06-31",
    "createdAfter=2026-01-01T24:00:00Z",
    "createdAfter=2026-01-01T23:60:00Z",
    // Percent-encoding that is not UTF-8 (an encoder's lone continuation byte, a byte no UTF-8 has).
    "search=%C3%28",
    "search=caf%FF",
    "search=%E2%82",
    "tag=%C3%28",
    "tag=ok&tag=%FF",
    "metadata[team]=%FF",
    "metadata[te%FFam]=blue",
    "search=%ED%A0%80",
  ])("refuses %s with invalid_query", async (query) => {
    const { key } = await newWorkspace();
    const response = await api(`/v1/videos?${query}`, bearer(key));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_query");
  });
});

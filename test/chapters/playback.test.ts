import { describe, expect, it } from "vitest";
import { mintPlaybackToken } from "../../src/playback/tokens";
import { encoding, finishAll, playable, probeFacts, withFakeEncoder } from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";

const SECRET = "test-playback-secret-0123456789abcdef01";
/** The video's duration as its probe reports it. */
const DURATION = 8;
const LIST = [
  { start: 0, title: "Introduction" },
  { start: 2.5, title: "<Setting up> & more" },
  { start: 6, title: "Q&A --> the end" },
];
const VTT = [
  "WEBVTT",
  "",
  "00:00:00.000 --> 00:00:02.500",
  "Introduction",
  "",
  "00:00:02.500 --> 00:00:06.000",
  "&lt;Setting up&gt; &amp; more",
  "",
  "00:00:06.000 --> 00:00:08.000",
  "Q&amp;A --&gt; the end",
  "",
].join("\n");

const encoder = withFakeEncoder();

function putChapters(key: string, id: string, chapters: unknown[] = LIST) {
  return api(`/v1/videos/${id}/chapters`, bearer(key, json("PUT", { chapters })));
}

/** A ready video of 360p and DURATION seconds, with the chapters of LIST. */
async function video() {
  const { key, session, project } = await newWorkspace();
  await api(
    `/v1/projects/${project.id}/encoding-settings`,
    withCookie(session, json("PATCH", { enabledResolutions: ["360p"] })),
  );
  const { id } = await playable(encoder(), key, probeFacts(DURATION));
  await finishAll(encoder(), id);
  expect((await putChapters(key, id)).status).toBe(200);
  return { key, id };
}

async function expectNotFound(path: string) {
  const response = await api(path);
  expect(response.status, path).toBe(404);
  expect(await errorCode(response)).toBe("not_found");
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
}

describe("/play/<x>/chapters.vtt", () => {
  it("is a WebVTT chapters track: a cue per chapter to the next one's start, the last to the duration", async () => {
    const { id } = await video();
    const response = await api(`/play/${id}/chapters.vtt`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/vtt");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("last-modified")).toMatch(/GMT$/);
    expect(await response.text()).toBe(VTT);
    const etag = response.headers.get("etag") as string;
    expect((await api(`/play/${id}/chapters.vtt`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const head = await api(`/play/${id}/chapters.vtt`, { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe(String(new TextEncoder().encode(VTT).byteLength));
  });

  it("changes at once when the chapters do, and answers 404 not_found once they are deleted", async () => {
    const { key, id } = await video();
    // The playback state is remembered now; the writes below forget it.
    expect((await api(`/play/${id}/chapters.vtt`)).status).toBe(200);
    await putChapters(key, id, [{ start: 0, title: "All of it" }]);
    expect(await (await api(`/play/${id}/chapters.vtt`)).text()).toBe(
      "WEBVTT\n\n00:00:00.000 --> 00:00:08.000\nAll of it\n",
    );
    expect((await api(`/v1/videos/${id}/chapters`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    await expectNotFound(`/play/${id}/chapters.vtt`);
  });

  it("answers 404 not_found for a video without chapters, or not playable yet, and plays a playable one's", async () => {
    const { key } = await newWorkspace();
    const started = await encoding(encoder(), key);
    expect((await putChapters(key, started.id)).status).toBe(200);
    await expectNotFound(`/play/${started.id}/chapters.vtt`);
    const bare = await playable(encoder(), key, probeFacts(DURATION));
    await expectNotFound(`/play/${bare.id}/chapters.vtt`);
    // Still processing, but playable: its chapters play already.
    expect((await putChapters(key, bare.id)).status).toBe(200);
    expect(await (await api(`/play/${bare.id}/chapters.vtt`)).text()).toBe(VTT);
  });

  it("keeps a private video's chapters behind a token, and a deleted video's gone", async () => {
    const { key, id } = await video();
    await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { visibility: "private" })));
    const refused = await api(`/play/${id}/chapters.vtt`);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("playback_token_required");
    const token = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) + 600);
    expect(await (await api(`/play/${token}/chapters.vtt`)).text()).toBe(VTT);
    const altered = await api(`/play/${token.slice(0, -2)}xx/chapters.vtt`);
    expect(altered.status).toBe(403);
    expect(await errorCode(altered)).toBe("invalid_playback_token");

    await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    await expectNotFound(`/play/${token}/chapters.vtt`);
    await expectNotFound(`/play/${id}/chapters.vtt`);
  });

  it("holds only the chapters that meet a ranged token's span, with their own times", async () => {
    const { key, id } = await video();
    const cut = async (range: { start?: number; end?: number }) => {
      const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", range)));
      expect(minted.status).toBe(201);
      const { token } = (await minted.json()) as { token: string };
      const response = await api(`/play/${token}/chapters.vtt`);
      expect(response.status).toBe(200);
      return (await response.text()).split("\n").filter((line) => line.includes("-->"));
    };
    expect(await cut({ start: 3, end: 5 })).toEqual(["00:00:02.500 --> 00:00:06.000"]);
    // A chapter that ends where the span starts does not meet it; one that starts where it ends neither.
    expect(await cut({ start: 2.5, end: 6 })).toEqual(["00:00:02.500 --> 00:00:06.000"]);
    expect(await cut({ start: 1 })).toEqual([
      "00:00:00.000 --> 00:00:02.500",
      "00:00:02.500 --> 00:00:06.000",
      "00:00:06.000 --> 00:00:08.000",
    ]);
    expect(await cut({ end: 2 })).toEqual(["00:00:00.000 --> 00:00:02.500"]);
  });
});

describe("the embed page's chapters", () => {
  it("has a default chapters <track> of the video while it has chapters, under the id or the token", async () => {
    const { key, id } = await video();
    const track = (subject: string) =>
      `<track kind="chapters" label="Chapters" src="http://api.test/play/${subject}/chapters.vtt" default />`;
    const page = await api(`/embed/${id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(track(id));
    expect(html).toContain('<media-preview-chapter-display slot="preview"></media-preview-chapter-display>');
    const token = await mintPlaybackToken(SECRET, id, Math.floor(Date.now() / 1000) + 600);
    expect(await (await api(`/embed/${token}`)).text()).toContain(track(token));

    await api(`/v1/videos/${id}/chapters`, bearer(key, { method: "DELETE" }));
    expect(await (await api(`/embed/${id}`)).text()).not.toContain('kind="chapters"');
  });
});

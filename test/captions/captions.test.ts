import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { videoPrefix } from "../../src/lib/storage-keys";
import { api, bearer, errorCode, newKey, newVideo, newWorkspace, withCookie } from "../helpers";
import { hostileCaptions } from "../support/hostile-captions";

type Track = { language: string; label: string; source: string; url: string };

const VTT = "WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nHello\n\n00:00:02.000 --> 00:00:03.000 align:start\nworld\n";
const SRT = "1\r\n00:00:00,500 --> 00:00:02,000\r\nOlá\r\n\r\n2\r\n00:00:02,000 --> 00:00:03,000\r\nmundo\r\n";

afterEach(() => {
  vi.restoreAllMocks();
});

function put(key: string, videoId: string, language: string, body: BodyInit, type = "text/vtt", query = "") {
  return api(
    `/v1/videos/${videoId}/captions/${language}${query}`,
    bearer(key, { method: "PUT", body, headers: { "content-type": type } }),
  );
}

async function tracksOf(key: string, videoId: string): Promise<Track[]> {
  const response = await api(`/v1/videos/${videoId}/captions`, bearer(key));
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Track[] }).data;
}

/** The caption objects stored under the video's prefix, with their text. */
async function storedCaptions(projectId: string, videoId: string): Promise<string[]> {
  const listed = await env.MEDIA.list({ prefix: `${videoPrefix(projectId, videoId)}captions/` });
  return Promise.all(listed.objects.map(async (object) => (await env.MEDIA.get(object.key))?.text() ?? ""));
}

async function setUp() {
  const { key, session, project } = await newWorkspace();
  const { video } = await newVideo(key);
  return { key, session, project, video };
}

describe("PUT /v1/videos/{id}/captions/{language}", () => {
  it("stores a WebVTT track as it came, named in English by default, at its public URL", async () => {
    const { key, project, video } = await setUp();
    const response = await put(key, video.id, "pt-BR", VTT);
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"captions";q=60;w=60');
    const track = (await response.json()) as Track;
    expect(track).toEqual({
      language: "pt-BR",
      label: "Brazilian Portuguese",
      source: "upload",
      status: "ready",
      url: `http://api.test/play/${video.id}/captions/pt-BR.vtt`,
    });
    expect(await tracksOf(key, video.id)).toEqual([track]);
    expect(await storedCaptions(project.id, video.id)).toEqual([VTT]);
    // Any status but deleted: this video is still waiting for its upload.
    expect(video.status).toBe("waiting_for_upload");
  });

  it("stores SubRip as WebVTT with the same cues and the same text", async () => {
    const { key, project, video } = await setUp();
    const response = await put(key, video.id, "pt", SRT, "application/x-subrip; charset=utf-8");
    expect(response.status).toBe(200);
    expect(((await response.json()) as Track).label).toBe("Portuguese");
    expect(await storedCaptions(project.id, video.id)).toEqual([
      "WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nOlá\n\n00:00:02.000 --> 00:00:03.000\nmundo\n",
    ]);
  });

  it("compares languages case-insensitively, keeps the canonical case, and replaces a track on a second PUT", async () => {
    const { key, project, video } = await setUp();
    expect(((await (await put(key, video.id, "ZH-hant", VTT)).json()) as Track).language).toBe("zh-Hant");
    const replaced = await put(key, video.id, "zh-HANT", "WEBVTT\n", "text/vtt", "?label=%E7%B9%81%E9%AB%94");
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toEqual({
      language: "zh-Hant",
      label: "繁體",
      source: "upload",
      status: "ready",
      url: `http://api.test/play/${video.id}/captions/zh-Hant.vtt`,
    });
    await put(key, video.id, "en", VTT, "text/vtt", "?label=%20English%20(CC)%20");
    expect((await tracksOf(key, video.id)).map((t) => [t.language, t.label])).toEqual([
      ["en", "English (CC)"],
      ["zh-Hant", "繁體"],
    ]);
    // The replaced file is gone; one object per track is left.
    expect((await storedCaptions(project.id, video.id)).sort()).toEqual([VTT, "WEBVTT\n"].sort());
  });

  it("takes a session cookie with ?projectId=", async () => {
    const { session, project, video } = await setUp();
    const response = await api(
      `/v1/videos/${video.id}/captions/fr?projectId=${project.id}`,
      withCookie(session, { method: "PUT", body: VTT, headers: { "content-type": "text/vtt" } }),
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as Track).label).toBe("French");
  });

  it.each([
    ["text/plain", VTT],
    ["application/json", "{}"],
    ["text/vtt+json", VTT],
    ["application/srt", SRT],
    ["", VTT],
  ])("refuses Content-Type %j with 415 unsupported_media_type", async (type, body) => {
    const { key, video } = await setUp();
    const headers: Record<string, string> = type ? { "content-type": type } : {};
    const response = await api(`/v1/videos/${video.id}/captions/en`, bearer(key, { method: "PUT", body, headers }));
    expect(response.status).toBe(415);
    expect(await errorCode(response)).toBe("unsupported_media_type");
  });

  it("refuses more than 2 MiB, declared or streamed, with 413 payload_too_large", async () => {
    const { key, video } = await setUp();
    const cue = "00:00:00.000 --> 00:00:01.000\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n";
    const big = `WEBVTT\n\n${cue.repeat(Math.ceil((2 * 1024 * 1024) / cue.length))}`;
    expect((await put(key, video.id, "en", big)).status).toBe(413);
    // Exactly 2 MiB passes.
    const exact = `WEBVTT\n\n${cue.repeat(Math.floor((2 * 1024 * 1024 - 8) / cue.length))}`.padEnd(
      2 * 1024 * 1024,
      "\n",
    );
    expect(new TextEncoder().encode(exact).byteLength).toBe(2 * 1024 * 1024);
    expect((await put(key, video.id, "en", exact)).status).toBe(200);
    // Streamed, without a Content-Length: refused once the bytes pass the limit.
    let sent = 0;
    const chunk = new TextEncoder().encode(cue.repeat(1000));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 4 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await put(key, video.id, "de", stream);
    expect(streamed.status).toBe(413);
    expect(await errorCode(streamed)).toBe("payload_too_large");
    expect(sent).toBeLessThan(4 * 1024 * 1024);
  });

  it.each([
    [
      "not UTF-8",
      new Uint8Array([...new TextEncoder().encode("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n"), 0xe9, 0x0a]),
    ],
    ["empty", ""],
    ["SubRip sent as WebVTT", SRT],
    ["WebVTT sent as SubRip", VTT],
    ["cues out of order", "WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nb\n\n00:00:01.000 --> 00:00:02.000\na\n"],
    ["a cue ending before it starts", "WEBVTT\n\n00:00:05.000 --> 00:00:04.000\nb\n"],
    ["a PNG", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ])("refuses a body that is %s with 400 invalid_captions", async (what, body) => {
    const { key, video } = await setUp();
    const type = what === "WebVTT sent as SubRip" ? "application/x-subrip" : "text/vtt";
    const response = await put(key, video.id, "en", body, type);
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: { code: string; details: { path: string }[] } }).error;
    expect(error.code).toBe("invalid_captions");
    expect(error.details[0]?.path).toBe("body");
    expect(await tracksOf(key, video.id)).toEqual([]);
  });

  it("names the line at fault", async () => {
    const { key, video } = await setUp();
    const response = await put(
      key,
      video.id,
      "en",
      "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\na\n\n00:00:03.000 -> x\nb\n",
    );
    const body = (await response.json()) as { error: { details: { message: string }[] } };
    expect(body.error.details[0]?.message).toMatch(/^line 6: /);
  });

  it.each(["e", "en_US", "english-language-tag-too-long-for-us", "en--us", "x", "e1"])(
    "refuses the language %j with 400 invalid_captions",
    async (language) => {
      const { key, video } = await setUp();
      const response = await put(key, video.id, encodeURIComponent(language), VTT);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
      expect(body.error.code).toBe("invalid_captions");
      expect(body.error.details[0]?.path).toBe("language");
    },
  );

  it.each([
    ["empty", ""],
    ["blank", "%20%20"],
    ["101 characters", "a".repeat(101)],
    ["a double quote", "%22Quoted%22"],
    ["a line break", "two%0Alines"],
    ["a lone surrogate", "%ED%A0%80"],
    ["a line separator (U+2028) inside", "a%E2%80%A8%23EXT-X-MEDIA%3ATYPE%3DSUBTITLES"],
    ["a paragraph separator (U+2029) inside", "a%E2%80%A9b"],
    ["a line separator at its end", "English%E2%80%A8"],
    ["a next-line control (U+0085)", "a%C2%85b"],
    // Bytes that are not UTF-8, which a decoder would store as "%FF" or as U+FFFD.
    ["a byte no UTF-8 has", "caf%FF"],
    ["a cut UTF-8 sequence", "caf%C3%28"],
  ])("refuses a label that is %s with 400 invalid_query", async (_, label) => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, "en", VTT, "text/vtt", `?label=${label}`);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_query");
  });

  it("holds at most 20 tracks: a 21st language is 409 quota_exceeded, a language it has is replaced", async () => {
    const { key, video } = await setUp();
    const languages = Array.from({ length: 20 }, (_, i) => `x-l${String(i).padStart(2, "0")}`);
    for (const language of languages) expect((await put(key, video.id, language, VTT)).status).toBe(200);
    const refused = await put(key, video.id, "en", VTT);
    expect(refused.status).toBe(409);
    expect(await errorCode(refused)).toBe("quota_exceeded");
    expect((await put(key, video.id, "x-l07", VTT, "text/vtt", "?label=Again")).status).toBe(200);
    expect((await tracksOf(key, video.id)).map((track) => track.language)).toEqual(languages);
    expect((await api(`/v1/videos/${video.id}/captions/x-l00`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect((await put(key, video.id, "en", VTT)).status).toBe(200);
  });

  it.each(
    hostileCaptions().map((file) => [`${file.type === "text/vtt" ? "WebVTT" : "SubRip"}: ${file.name}`, file] as const),
  )("answers a file made to be slow to read at once (%s)", async (_, file) => {
    // A cue setting of digits once took time in the square of its length (2 MiB: hours); the
    // timings are in scripts/bench-captions.ts, what each file gets is here.
    const { key, video } = await setUp();
    const response = await put(key, video.id, "en", file.body, file.type);
    expect(response.status).toBe(file.valid ? 200 : 400);
    if (!file.valid) expect(await errorCode(response)).toBe("invalid_captions");
    else await response.body?.cancel();
  });

  it("takes a label of 100 characters", async () => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, "en", VTT, "text/vtt", `?label=${"é".repeat(100)}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as Track).label).toBe("é".repeat(100));
  });

  it("answers 404 video_not_found for an unknown, malformed, foreign or deleted video, and stores nothing", async () => {
    const { key, project, video } = await setUp();
    const other = await newWorkspace();
    const foreign = (await newVideo(other.key)).video.id;
    expect((await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-a-ulid", foreign, video.id]) {
      const response = await put(key, id, "en", VTT);
      expect(response.status, id).toBe(404);
      expect(await errorCode(response)).toBe("video_not_found");
    }
    expect(await storedCaptions(project.id, video.id)).toEqual([]);
    expect(await storedCaptions(other.project.id, foreign)).toEqual([]);
    expect(await tracksOf(other.key, foreign)).toEqual([]);
  });

  it("takes a write key only", async () => {
    const { session, project, video } = await setUp();
    const reader = await newKey(session, project.id, ["read"]);
    const response = await put(reader, video.id, "en", VTT);
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("insufficient_scope");
  });
});

describe("GET /v1/videos/{id}/captions", () => {
  it("lists the tracks by language, with a read key", async () => {
    const { key, session, project, video } = await setUp();
    for (const language of ["fr", "de", "en-GB", "en"]) await put(key, video.id, language, VTT);
    const reader = await newKey(session, project.id, ["read"]);
    expect((await tracksOf(reader, video.id)).map((t) => t.language)).toEqual(["de", "en", "en-GB", "fr"]);
    const lower = await api(`/v1/videos/${video.id.toLowerCase()}/captions`, bearer(reader));
    expect(((await lower.json()) as { data: Track[] }).data).toHaveLength(4);
  });

  it("answers 404 video_not_found for a deleted or foreign video", async () => {
    const { key, video } = await setUp();
    await put(key, video.id, "en", VTT);
    const other = await newWorkspace();
    const foreign = await api(`/v1/videos/${video.id}/captions`, bearer(other.key));
    expect(foreign.status).toBe(404);
    expect(await errorCode(foreign)).toBe("video_not_found");
    await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    const gone = await api(`/v1/videos/${video.id}/captions`, bearer(key));
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("video_not_found");
  });
});

describe("DELETE /v1/videos/{id}/captions/{language}", () => {
  it("deletes the track and its file; a second time, or an unknown language, is 404 captions_not_found", async () => {
    const { key, project, video } = await setUp();
    await put(key, video.id, "pt-BR", VTT);
    await put(key, video.id, "en", "WEBVTT\n");
    const removed = await api(`/v1/videos/${video.id}/captions/PT-br`, bearer(key, { method: "DELETE" }));
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe("");
    expect((await tracksOf(key, video.id)).map((t) => t.language)).toEqual(["en"]);
    expect(await storedCaptions(project.id, video.id)).toEqual(["WEBVTT\n"]);
    for (const language of ["pt-BR", "fr", "not_a_tag", "x"]) {
      const again = await api(`/v1/videos/${video.id}/captions/${language}`, bearer(key, { method: "DELETE" }));
      expect(again.status, language).toBe(404);
      expect(await errorCode(again)).toBe("captions_not_found");
    }
  });

  it("answers 404 video_not_found for a deleted video, whose tracks go with its storage", async () => {
    const { key, project, video } = await setUp();
    await put(key, video.id, "en", VTT);
    expect((await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    const response = await api(`/v1/videos/${video.id}/captions/en`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("video_not_found");
    // The delete's clean-up (run at once in tests) removed the object and the row.
    expect(await storedCaptions(project.id, video.id)).toEqual([]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM captions WHERE video_id = ?")
      .bind(video.id)
      .first("n");
    expect(rows).toBe(0);
  });
});

describe("the OpenAPI document", () => {
  it("describes the three operations, their bodies and their error codes", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: object }>>;
    };
    const one = doc.paths["/v1/videos/{id}/captions/{language}"];
    expect(Object.keys(one?.put?.requestBody?.content ?? {})).toEqual(["text/vtt", "application/x-subrip"]);
    expect(Object.keys(one?.put?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "404", "413", "415", "429"]),
    );
    expect(JSON.stringify(one?.delete?.responses)).toContain("captions_not_found");
    expect(doc.paths["/v1/videos/{id}/captions"]?.get).toBeDefined();
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { encoding, playable, probeFacts, result, withFakeEncoder } from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newKey, newVideo, newWorkspace, withCookie } from "../helpers";

type Chapter = { start: number; title: string };
type Problem = { code: string; details?: { path: string; message: string }[] };

const LIST: Chapter[] = [
  { start: 0, title: "Introduction" },
  { start: 62.5, title: "Setting up" },
  { start: 180, title: "Q&A" },
];

const encoder = withFakeEncoder();

function put(key: string, videoId: string, body: unknown) {
  return api(`/v1/videos/${videoId}/chapters`, bearer(key, json("PUT", body)));
}

async function chaptersOf(key: string, videoId: string): Promise<Chapter[]> {
  const response = await api(`/v1/videos/${videoId}/chapters`, bearer(key));
  expect(response.status).toBe(200);
  return ((await response.json()) as { chapters: Chapter[] }).chapters;
}

async function problem(response: Response): Promise<Problem> {
  return ((await response.json()) as { error: Problem }).error;
}

async function setUp() {
  const { key, session, project } = await newWorkspace();
  const { video } = await newVideo(key);
  return { key, session, project, video };
}

describe("PUT /v1/videos/{id}/chapters", () => {
  it("saves the list, answers it, and replaces it on a second PUT, whatever the video's status", async () => {
    const { key, video } = await setUp();
    const response = await put(key, video.id, { chapters: LIST });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"chapters";q=60;w=60');
    expect(await response.json()).toEqual({ chapters: LIST });
    expect(await chaptersOf(key, video.id)).toEqual(LIST);
    // Any status but deleted: this video is still waiting for its upload.
    expect(video.status).toBe("waiting_for_upload");

    const replaced = await put(key, video.id, { chapters: [{ start: 0, title: "  Only one  " }] });
    expect(await replaced.json()).toEqual({ chapters: [{ start: 0, title: "Only one" }] });
    expect(await chaptersOf(key, video.id)).toEqual([{ start: 0, title: "Only one" }]);
  });

  it("takes 100 chapters of 100 characters, at the last millisecond before 12 hours", async () => {
    const { key, video } = await setUp();
    const chapters = Array.from({ length: 100 }, (_, i) => ({
      start: i === 99 ? 43_199.999 : i / 1000,
      title: `${"é".repeat(97)}${String(i).padStart(3, "0")}`,
    }));
    const response = await put(key, video.id, { chapters });
    expect(response.status).toBe(200);
    expect(await chaptersOf(key, video.id)).toEqual(chapters);
  });

  it("takes a session cookie with ?projectId=", async () => {
    const { session, project, video } = await setUp();
    const response = await api(
      `/v1/videos/${video.id}/chapters?projectId=${project.id}`,
      withCookie(session, json("PUT", { chapters: LIST })),
    );
    expect(response.status).toBe(200);
  });

  const tooMany = Array.from({ length: 101 }, (_, i) => ({ start: i, title: `Part ${i}` }));
  const second = (chapter: Record<string, unknown>) => ({ chapters: [{ start: 0, title: "Start" }, chapter] });
  it.each([
    ["no chapters field", {}, "chapters"],
    ["an empty list", { chapters: [] }, "chapters"],
    ["101 chapters", { chapters: tooMany }, "chapters"],
    ["not a list", { chapters: { start: 0, title: "a" } }, "chapters"],
    ["an unknown field", { chapters: LIST, extra: true }, "extra"],
    ["a first chapter after 0", { chapters: [{ start: 5, title: "Late" }] }, "chapters.0.start"],
    ["a start equal to the one before", { chapters: [...LIST, { start: 180, title: "Again" }] }, "chapters.3.start"],
    ["a start before the one before", { chapters: [...LIST, { start: 100, title: "Back" }] }, "chapters.3.start"],
    ["a negative start", second({ start: -1, title: "Negative" }), "chapters.1.start"],
    ["a start as text", second({ start: "10", title: "Text" }), "chapters.1.start"],
    ["a start past whole milliseconds", second({ start: 1.0005, title: "Fine" }), "chapters.1.start"],
    ["a start of 12 hours", second({ start: 43_200, title: "Too late" }), "chapters.1.start"],
    ["no start", second({ title: "Nowhere" }), "chapters.1.start"],
    ["no title", second({ start: 10 }), "chapters.1.title"],
    ["an empty title", second({ start: 10, title: "" }), "chapters.1.title"],
    ["a blank title", second({ start: 10, title: "   " }), "chapters.1.title"],
    ["a title of 101 characters", second({ start: 10, title: "a".repeat(101) }), "chapters.1.title"],
    ["a title with a control character", second({ start: 10, title: "bell\u0007" }), "chapters.1.title"],
    ["a title with a line break", second({ start: 10, title: "two\nlines" }), "chapters.1.title"],
    ["a title with a next-line control (U+0085)", second({ start: 10, title: "a\u0085b" }), "chapters.1.title"],
    ["a title with a lone surrogate", second({ start: 10, title: "half \ud83d" }), "chapters.1.title"],
    ["a title with a line separator", second({ start: 10, title: "a\u2028b" }), "chapters.1.title"],
    ["a title ending in a paragraph separator", second({ start: 10, title: "Intro\u2029" }), "chapters.1.title"],
    ["a chapter with an unknown field", second({ start: 10, title: "a", end: 20 }), "chapters.1.end"],
  ])("refuses %s with 400 invalid_body naming it, and changes nothing", async (_, body, path) => {
    const { key, video } = await setUp();
    expect((await put(key, video.id, { chapters: LIST })).status).toBe(200);
    const response = await put(key, video.id, body);
    expect(response.status).toBe(400);
    const error = await problem(response);
    expect(error.code).toBe("invalid_body");
    expect(error.details?.map((detail) => detail.path)).toContain(path);
    expect(await chaptersOf(key, video.id)).toEqual(LIST);
  });

  it("refuses a body that is not JSON, or not sent as JSON, with 400 invalid_body", async () => {
    const { key, video } = await setUp();
    for (const init of [
      { method: "PUT", body: "{", headers: { "content-type": "application/json" } },
      { method: "PUT", body: JSON.stringify({ chapters: LIST }), headers: { "content-type": "text/plain" } },
    ]) {
      const response = await api(`/v1/videos/${video.id}/chapters`, bearer(key, init));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_body");
    }
    expect(await chaptersOf(key, video.id)).toEqual([]);
  });

  it("refuses every chapter at or past a known duration, each named, and takes one just below it", async () => {
    const { key } = await newWorkspace();
    const { id } = await playable(encoder(), key, probeFacts(6));
    const refused = await put(key, id, {
      chapters: [
        ...LIST.slice(0, 1),
        { start: 5.999, title: "Last" },
        { start: 6, title: "At" },
        { start: 7, title: "Past" },
      ],
    });
    expect(refused.status).toBe(400);
    const error = await problem(refused);
    expect(error.code).toBe("invalid_body");
    expect(error.details).toEqual([
      { path: "chapters.2.start", message: "must be below the video's duration (6 s)" },
      { path: "chapters.3.start", message: "must be below the video's duration (6 s)" },
    ]);
    expect(await chaptersOf(key, id)).toEqual([]);
    const kept = [LIST[0] as Chapter, { start: 5.999, title: "Last" }];
    expect((await put(key, id, { chapters: kept })).status).toBe(200);
    expect(await chaptersOf(key, id)).toEqual(kept);
  });

  it("keeps a list saved before the duration was known as it was, and shows only the chapters below it", async () => {
    const { key } = await newWorkspace();
    const started = await encoding(encoder(), key);
    const saved = [
      ...LIST.slice(0, 1),
      { start: 3, title: "Middle" },
      { start: 6, title: "At" },
      { start: 9, title: "Past" },
    ];
    expect((await put(key, started.id, { chapters: saved })).status).toBe(200);
    expect(await chaptersOf(key, started.id)).toEqual(saved);
    // The probe finds 6 s.
    expect((await result(started.probe, { probe: probeFacts(6) })).status).toBe(204);
    expect(await chaptersOf(key, started.id)).toEqual(saved.slice(0, 2));
    const row = await env.DB.prepare("SELECT chapters FROM chapters WHERE video_id = ?")
      .bind(started.id)
      .first("chapters");
    expect(JSON.parse(row as string)).toEqual(saved);
  });

  it("answers 404 video_not_found for an unknown, malformed, foreign or deleted video, and stores nothing", async () => {
    const { key, video } = await setUp();
    const other = await newWorkspace();
    const foreign = (await newVideo(other.key)).video.id;
    expect((await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-a-ulid", foreign, video.id]) {
      const response = await put(key, id, { chapters: LIST });
      expect(response.status, id).toBe(404);
      expect(await errorCode(response)).toBe("video_not_found");
    }
    expect(await chaptersOf(other.key, foreign)).toEqual([]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM chapters WHERE video_id IN (?, ?)")
      .bind(video.id, foreign)
      .first("n");
    expect(rows).toBe(0);
  });

  it("takes a write key only", async () => {
    const { session, project, video } = await setUp();
    const reader = await newKey(session, project.id, ["read"]);
    const response = await put(reader, video.id, { chapters: LIST });
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("insufficient_scope");
  });
});

describe("GET and DELETE /v1/videos/{id}/chapters", () => {
  it("answers [] for a video without chapters, with a read key, its id in any case", async () => {
    const { key, session, project, video } = await setUp();
    const reader = await newKey(session, project.id, ["read"]);
    expect(await chaptersOf(reader, video.id)).toEqual([]);
    await put(key, video.id, { chapters: LIST });
    expect(await chaptersOf(reader, video.id.toLowerCase())).toEqual(LIST);
  });

  it("deletes the chapters (204 whether there were any), after which the video has none", async () => {
    const { key, video } = await setUp();
    await put(key, video.id, { chapters: LIST });
    const removed = await api(`/v1/videos/${video.id}/chapters`, bearer(key, { method: "DELETE" }));
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe("");
    expect(await chaptersOf(key, video.id)).toEqual([]);
    expect((await api(`/v1/videos/${video.id}/chapters`, bearer(key, { method: "DELETE" }))).status).toBe(204);
  });

  it("answers 404 video_not_found for a foreign or deleted video, whose chapters go with its clean-up", async () => {
    const { key, video } = await setUp();
    await put(key, video.id, { chapters: LIST });
    const other = await newWorkspace();
    for (const init of [{}, { method: "DELETE" }]) {
      const foreign = await api(`/v1/videos/${video.id}/chapters`, bearer(other.key, init));
      expect(foreign.status).toBe(404);
      expect(await errorCode(foreign)).toBe("video_not_found");
    }
    expect(await chaptersOf(key, video.id)).toEqual(LIST);
    expect((await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    for (const init of [{}, { method: "DELETE" }]) {
      const gone = await api(`/v1/videos/${video.id}/chapters`, bearer(key, init));
      expect(gone.status).toBe(404);
      expect(await errorCode(gone)).toBe("video_not_found");
    }
    // The delete's clean-up (run at once in tests) removed the row.
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM chapters WHERE video_id = ?")
      .bind(video.id)
      .first("n");
    expect(rows).toBe(0);
  });

  it("answers another method with 405 method_not_allowed and the methods it takes", async () => {
    const { key, video } = await setUp();
    const response = await api(`/v1/videos/${video.id}/chapters`, bearer(key, json("POST", { chapters: LIST })));
    expect(response.status).toBe(405);
    expect(await errorCode(response)).toBe("method_not_allowed");
    expect(response.headers.get("allow")?.split(/,\s*/).sort()).toEqual(["DELETE", "GET", "HEAD", "PUT"]);
  });

  it("takes a write key only to delete", async () => {
    const { session, project, video } = await setUp();
    const reader = await newKey(session, project.id, ["read"]);
    const response = await api(`/v1/videos/${video.id}/chapters`, bearer(reader, { method: "DELETE" }));
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("insufficient_scope");
  });
});

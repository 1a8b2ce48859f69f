import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  bearer,
  errorCode,
  json,
  newKey,
  newProject,
  newVideo,
  newVideos,
  newWorkspace,
  type VideoBody,
  withCookie,
} from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";
import { runScheduled } from "../support/handlers";

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

async function videoRow(id: string) {
  return env.DB.prepare("SELECT * FROM videos WHERE id = ?").bind(id).first<Record<string, string | null>>();
}

async function eventsOf(videoId: string) {
  const { results } = await env.DB.prepare("SELECT * FROM outbox_events WHERE subject_id = ?")
    .bind(videoId)
    .all<{ id: string; type: string; payload: string; project_id: string }>();
  return results;
}

async function putPart(key: string, videoId: string, partNumber: number | string, bytes: Uint8Array) {
  return api(
    `/v1/videos/${videoId}/upload/parts/${partNumber}`,
    bearer(key, { method: "PUT", body: bytes, headers: { "content-length": String(bytes.byteLength) } }),
  );
}

describe("POST /v1/videos", () => {
  it("creates a video waiting for its upload, with an open upload session", async () => {
    const { key, project } = await newWorkspace();
    const response = await api("/v1/videos", bearer(key, json("POST", { title: " Launch ", visibility: "unlisted" })));
    expect(response.status).toBe(201);
    const { video, upload } = (await response.json()) as {
      video: VideoBody;
      upload: { id: string; expiresAt: string };
    };
    expect(video).toMatchObject({
      projectId: project.id,
      title: "Launch",
      status: "waiting_for_upload",
      visibility: "unlisted",
      thumbnail: { source: "auto", url: `http://api.test/thumbnails/${project.id}/${video.id}/poster.jpg` },
    });
    expect(video.id).toMatch(ULID);
    expect(upload.id).toMatch(ULID);
    expect(Date.parse(upload.expiresAt)).toBeGreaterThan(Date.now());
    expect((await videoRow(video.id))?.upload_r2_id).toBeTruthy();
  });

  it("defaults to public visibility and no title", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    expect(video).toMatchObject({ visibility: "public", title: null });
  });

  it.each([
    ["an empty title", { title: "" }],
    ["a title over 200 characters", { title: "x".repeat(201) }],
    ["an unknown visibility", { visibility: "secret" }],
    ["an unknown field", { title: "x", labels: [] }],
    ["a number title", { title: 3 }],
  ])("refuses %s with invalid_body", async (_, body) => {
    const { key } = await newWorkspace();
    const response = await api("/v1/videos", bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("needs projectId under cookie auth, and only the caller's projects", async () => {
    const { session, project } = await newWorkspace();
    const missing = await api("/v1/videos", withCookie(session, json("POST", {})));
    expect(missing.status).toBe(400);
    expect(await errorCode(missing)).toBe("invalid_project_id");
    const malformed = await api("/v1/videos?projectId=nope", withCookie(session, json("POST", {})));
    expect(await errorCode(malformed)).toBe("invalid_project_id");
    const foreign = await api("/v1/videos?projectId=01ARZ3NDEKTSV4RRFFQ69G5FAV", withCookie(session, json("POST", {})));
    expect(foreign.status).toBe(404);
    expect(await errorCode(foreign)).toBe("not_found");
    const ok = await api(`/v1/videos?projectId=${project.id.toLowerCase()}`, withCookie(session, json("POST", {})));
    expect(ok.status).toBe(201);
  });

  it("ignores projectId under API-key auth", async () => {
    const { key, project } = await newWorkspace();
    const response = await api("/v1/videos?projectId=garbage", bearer(key, json("POST", {})));
    expect(response.status).toBe(201);
    expect(((await response.json()) as { video: VideoBody }).video.projectId).toBe(project.id);
  });
});

describe("reading videos", () => {
  it("reads one video, case-insensitively", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key, { title: "One" });
    const response = await api(`/v1/videos/${video.id.toLowerCase()}`, bearer(key));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(video);
  });

  it("answers video_not_found for unknown, malformed and other projects' ids", async () => {
    const { key } = await newWorkspace();
    const other = await newWorkspace();
    const { video } = await newVideo(other.key);
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-a-ulid", video.id]) {
      const response = await api(`/v1/videos/${id}`, bearer(key));
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("video_not_found");
    }
  });

  it("lists newest first with keyset pagination, leaving deleted videos out", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 5);
    await api(`/v1/videos/${ids[2]}`, bearer(key, { method: "DELETE" }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await api(`/v1/videos?limit=2${cursor ? `&cursor=${cursor}` : ""}`, bearer(key));
      expect(response.status).toBe(200);
      const page = (await response.json()) as { data: VideoBody[]; nextCursor: string | null };
      seen.push(...page.data.map((video) => video.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual([ids[4], ids[3], ids[1], ids[0]]);
  });

  it("uses 20 as the default page size", async () => {
    const { key } = await newWorkspace();
    await newVideos(key, 21);
    const page = (await (await api("/v1/videos", bearer(key))).json()) as {
      data: unknown[];
      nextCursor: string | null;
    };
    expect(page.data).toHaveLength(20);
    expect(page.nextCursor).not.toBeNull();
  });

  it.each(["0", "101", "abc", "1.5", "-1", "", "0x10", "1e1", "5.0", "+5", " 5"])(
    "refuses limit=%s with invalid_limit",
    async (limit) => {
      const { key } = await newWorkspace();
      const response = await api(`/v1/videos?limit=${limit}`, bearer(key));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_limit");
    },
  );

  it("answers a repeated parameter with that parameter's code", async () => {
    const { key } = await newWorkspace();
    expect(await errorCode(await api("/v1/videos?limit=1&limit=2", bearer(key)))).toBe("invalid_limit");
    expect(await errorCode(await api("/v1/videos?cursor=a&cursor=b", bearer(key)))).toBe("invalid_cursor");
  });

  it.each(["nope", "eyJhIjoxfQ", "WyJrMSIsIjIwMjYiLCJ4Il0", "%%%"])(
    "refuses cursor %s with invalid_cursor",
    async (cursor) => {
      const { key } = await newWorkspace();
      const response = await api(`/v1/videos?cursor=${cursor}`, bearer(key));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_cursor");
    },
  );

  it("lets a read-only key read but not write", async () => {
    const { session, project, key } = await newWorkspace();
    const { video } = await newVideo(key);
    const reader = await newKey(session, project.id, ["read"]);
    expect((await api(`/v1/videos/${video.id}`, bearer(reader))).status).toBe(200);
    const refused = await api(`/v1/videos/${video.id}`, bearer(reader, { method: "DELETE" }));
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("insufficient_scope");
  });
});

describe("uploads", () => {
  it("answers video_not_found when a delete lands while a part is on its way to R2", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    // R2 as seen by the request: the delete happens between the request's read and its upload.
    const media = {
      resumeMultipartUpload: (objectKey: string, uploadId: string) => {
        const real = env.MEDIA.resumeMultipartUpload(objectKey, uploadId);
        return {
          uploadPart: async (partNumber: number, body: ReadableStream) => {
            await apiWith({}, `/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
            return real.uploadPart(partNumber, body);
          },
        };
      },
    } as unknown as R2Bucket;
    const bytes = new Uint8Array([1, 2, 3]);
    const response = await apiWith(
      { MEDIA: media },
      `/v1/videos/${video.id}/upload/parts/1`,
      bearer(key, { method: "PUT", body: bytes, headers: { "content-length": "3" } }),
    );
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("video_not_found");
  });

  it("streams parts to R2 and completes the upload", async () => {
    const { key, project } = await newWorkspace();
    const { video } = await newVideo(key);
    const bytes = new TextEncoder().encode("not really a video, but bytes all the same");
    const part = await putPart(key, video.id, 1, bytes);
    expect(part.status).toBe(200);
    const { etag, partNumber } = (await part.json()) as { etag: string; partNumber: number };
    expect(partNumber).toBe(1);
    const complete = await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag }] })),
    );
    expect(complete.status).toBe(200);
    expect(await complete.json()).toMatchObject({ id: video.id, status: "uploaded" });
    const object = await env.MEDIA.get(`videos/${project.id}/${video.id}/source`);
    expect(await object?.text()).toBe("not really a video, but bytes all the same");
    const again = await putPart(key, video.id, 2, bytes);
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("upload_not_active");
  });

  it("refuses a completion with wrong parts and releases the video for another try", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    await putPart(key, video.id, 1, new Uint8Array([1, 2, 3]));
    const wrong = await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag: "bogus" }] })),
    );
    expect(wrong.status).toBe(400);
    expect(await errorCode(wrong)).toBe("invalid_body");
    expect(((await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody).status).toBe(
      "waiting_for_upload",
    );
  });

  it.each([
    ["part 0", 0],
    ["part 10001", 10001],
    ["a non-numeric part", "x"],
    ["a hexadecimal part", "0x1"],
    ["an exponent", "1e0"],
    ["a decimal point", "1.0"],
  ])("refuses %s with invalid_body", async (_, partNumber) => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const response = await putPart(key, video.id, partNumber, new Uint8Array([1]));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it.each([
    ["no parts", { parts: [] }],
    [
      "a repeated part",
      {
        parts: [
          { partNumber: 1, etag: "a" },
          { partNumber: 1, etag: "b" },
        ],
      },
    ],
    ["a missing etag", { parts: [{ partNumber: 1 }] }],
    ["an unknown field", { parts: [{ partNumber: 1, etag: "a" }], final: true }],
  ])("refuses a completion with %s", async (_, body) => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const response = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("refuses parts and completion while a completion is in flight", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() + 60_000).toISOString(), video.id)
      .run();
    expect(((await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody).status).toBe(
      "upload_completing",
    );
    expect(await errorCode(await putPart(key, video.id, 1, new Uint8Array([1])))).toBe("upload_completion_in_progress");
    const complete = await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag: "a" }] })),
    );
    expect(complete.status).toBe(409);
    expect(await errorCode(complete)).toBe("upload_completion_in_progress");
  });

  it("answers a repeat of its completion with the video, and refuses other parts with upload_not_active", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const part = (await (await putPart(key, video.id, 1, new Uint8Array([1, 2, 3]))).json()) as { etag: string };
    const complete = (parts: unknown) =>
      api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", { parts })));
    const first = await complete([{ partNumber: 1, etag: part.etag }]);
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as VideoBody;
    const again = await complete([{ partNumber: 1, etag: part.etag }]);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(firstBody);
    const other = await complete([{ partNumber: 1, etag: "another-etag" }]);
    expect(other.status).toBe(409);
    expect(await errorCode(other)).toBe("upload_not_active");
    const more = await complete([
      { partNumber: 1, etag: part.etag },
      { partNumber: 2, etag: part.etag },
    ]);
    expect(await errorCode(more)).toBe("upload_not_active");
  });

  it("takes a completion naming all 10,000 parts (its body past 64 KiB), and refuses one over 2 MiB", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const etag = "0123456789abcdef0123456789abcdef";
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ partNumber: i + 1, etag }));
    const body = JSON.stringify({ parts });
    expect(body.length).toBeGreaterThan(64 * 1024);
    const response = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", body)));
    // Read and validated whole: what refuses it is R2, whose parts these are not.
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "The parts do not complete the upload.",
    );
    const huge = JSON.stringify({ parts: parts.map((part) => ({ ...part, etag: "e".repeat(200) })) });
    expect(huge.length).toBeGreaterThan(2 * 1024 * 1024);
    const refused = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", huge)));
    expect(refused.status).toBe(413);
    expect(await errorCode(refused)).toBe("payload_too_large");
  });

  it("finishes on a retry a completion that died after R2 assembled the source, before D1 recorded it", async () => {
    const { key, project } = await newWorkspace();
    const { video } = await newVideo(key);
    const part = (await (await putPart(key, video.id, 1, new Uint8Array([4, 2]))).json()) as { etag: string };
    const body = { parts: [{ partNumber: 1, etag: part.etag }] };
    const dies = new InstrumentedD1(env.DB, (sql) => sql.includes("SET status = 'uploaded'"));
    const first = await apiWith(
      { DB: dies.binding },
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", body)),
    );
    expect(first.status).toBe(500);
    expect(await env.MEDIA.head(`videos/${project.id}/${video.id}/source`)).not.toBeNull();
    // Within the lease the completion is still in flight; after it, a retry finishes the record.
    const during = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", body)));
    expect(await errorCode(during)).toBe("upload_completion_in_progress");
    await env.DB.prepare("UPDATE videos SET completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1).toISOString(), video.id)
      .run();
    const retry = await api(`/v1/videos/${video.id}/upload/complete`, bearer(key, json("POST", body)));
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ id: video.id, status: "uploaded" });
    const source = await env.MEDIA.get(`videos/${project.id}/${video.id}/source`);
    expect(new Uint8Array((await source?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(new Uint8Array([4, 2]));
  });

  it("releases a video whose completion died once the lease expires", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const part = (await (await putPart(key, video.id, 1, new Uint8Array([7, 7]))).json()) as { etag: string };
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1).toISOString(), video.id)
      .run();
    expect(((await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody).status).toBe(
      "waiting_for_upload",
    );
    const complete = await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag: part.etag }] })),
    );
    expect(complete.status).toBe(200);
  });
});

describe("PATCH /v1/videos/{id}", () => {
  it("changes only the fields sent; a null title clears it", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key, { title: "Draft", visibility: "unlisted" });
    const edit = (body: unknown) => api(`/v1/videos/${video.id}`, bearer(key, json("PATCH", body)));
    const titled = await edit({ title: "  Final cut  " });
    expect(titled.status).toBe(200);
    expect(await titled.json()).toMatchObject({ id: video.id, title: "Final cut", visibility: "unlisted" });
    const hidden = (await (await edit({ visibility: "private" })).json()) as VideoBody;
    expect(hidden).toMatchObject({ title: "Final cut", visibility: "private" });
    expect(Date.parse(hidden.updatedAt)).toBeGreaterThanOrEqual(Date.parse(video.updatedAt));
    expect(await (await edit({ title: null })).json()).toMatchObject({ title: null, visibility: "private" });
    expect(await (await edit({})).json()).toMatchObject({ title: null, visibility: "private" });
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as VideoBody;
    expect(read).toMatchObject({ title: null, visibility: "private" });
  });

  it.each([
    ["an unknown field", { name: "x" }],
    ["an empty title", { title: "   " }],
    ["a title over 200 characters", { title: "x".repeat(201) }],
    ["a bad visibility", { visibility: "secret" }],
    ["a title with a control character", { title: "a\u0007b" }],
    ["a non-object", [1]],
  ])("refuses %s with invalid_body", async (_, body) => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const response = await api(`/v1/videos/${video.id}`, bearer(key, json("PATCH", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("answers video_not_found for an unknown, foreign, deleted or non-ULID id", async () => {
    const { key } = await newWorkspace();
    const other = await newWorkspace();
    const { video: foreign } = await newVideo(other.key);
    const { video: gone } = await newVideo(key);
    await api(`/v1/videos/${gone.id}`, bearer(key, { method: "DELETE" }));
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", foreign.id, gone.id, "not-a-ulid"]) {
      const response = await api(`/v1/videos/${id}`, bearer(key, json("PATCH", { title: "x" })));
      expect([id, response.status, await errorCode(response)]).toEqual([id, 404, "video_not_found"]);
    }
    expect(((await (await api(`/v1/videos/${foreign.id}`, bearer(other.key))).json()) as VideoBody).title).toBeNull();
  });
});

describe("GET /v1/videos filters", () => {
  it("keeps only the videos with the status and visibility asked for, paging within the filter", async () => {
    const { key } = await newWorkspace();
    const publicOne = (await newVideo(key)).video.id;
    const privateOnes = [(await newVideo(key, { visibility: "private" })).video.id];
    privateOnes.push((await newVideo(key, { visibility: "private" })).video.id);
    const completing = (await newVideo(key, { visibility: "private" })).video.id;
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() + 60_000).toISOString(), completing)
      .run();
    const stale = (await newVideo(key)).video.id;
    // A completion whose lease ran out is waiting for its upload again, as the video object says.
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1).toISOString(), stale)
      .run();
    const ids = async (query: string) =>
      ((await (await api(`/v1/videos?${query}`, bearer(key))).json()) as { data: VideoBody[] }).data.map((v) => v.id);
    expect(await ids("visibility=public")).toEqual([stale, publicOne]);
    expect(await ids("status=upload_completing")).toEqual([completing]);
    expect(await ids("status=waiting_for_upload")).toEqual([stale, ...privateOnes.toReversed(), publicOne]);
    expect(await ids("status=waiting_for_upload&visibility=private")).toEqual(privateOnes.toReversed());
    expect(await ids("status=uploaded")).toEqual([]);

    const first = (await (await api("/v1/videos?visibility=private&limit=2", bearer(key))).json()) as {
      data: VideoBody[];
      nextCursor: string;
    };
    expect(first.data.map((v) => v.id)).toEqual([completing, privateOnes[1]]);
    const second = (await (
      await api(`/v1/videos?visibility=private&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, bearer(key))
    ).json()) as { data: VideoBody[]; nextCursor: string | null };
    expect(second).toMatchObject({ data: [{ id: privateOnes[0] }], nextCursor: null });
    // A cursor of one filter is no cursor of another.
    const other = await api(`/v1/videos?visibility=public&cursor=${encodeURIComponent(first.nextCursor)}`, bearer(key));
    expect(await errorCode(other)).toBe("invalid_cursor");
  });

  it.each(["status=done", "status=READY", "status=", "visibility=secret", "visibility=PUBLIC"])(
    "refuses %s with invalid_query",
    async (query) => {
      const { key } = await newWorkspace();
      const response = await api(`/v1/videos?${query}`, bearer(key));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_query");
    },
  );
});

describe("the video object", () => {
  it("carries the encoding fields, null or empty before the source is probed, and livemode", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const read = (await (await api(`/v1/videos/${video.id}`, bearer(key))).json()) as Record<string, unknown>;
    expect(read).toMatchObject({
      livemode: true,
      duration: null,
      width: null,
      height: null,
      renditions: [],
      playback: null,
      error: null,
    });
    expect(Object.keys(read).sort()).toEqual(
      [
        "id",
        "projectId",
        "livemode",
        "title",
        "status",
        "visibility",
        "thumbnail",
        "duration",
        "width",
        "height",
        "renditions",
        "playback",
        "error",
        "tags",
        "metadata",
        "allowedOrigins",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
  });
});

describe("DELETE /v1/videos/{id}", () => {
  it("soft-deletes, writes one video.deleted event and aborts the upload session", async () => {
    const { key, project } = await newWorkspace();
    const { video } = await newVideo(key);
    await putPart(key, video.id, 1, new Uint8Array([1, 2, 3]));
    const before = await videoRow(video.id);
    // apiWith waits for the work the response left running (the R2 abort) before returning.
    const response = await apiWith({}, `/v1/videos/${video.id.toLowerCase()}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(204);

    const row = await videoRow(video.id);
    expect(row?.deleted_at).toBeTruthy();
    expect(row?.upload_r2_id).toBeNull();
    const events = await eventsOf(video.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toMatch(ULID);
    expect(JSON.parse(events[0]?.payload ?? "{}")).toEqual({
      type: "video.deleted",
      timestamp: row?.deleted_at,
      data: { id: video.id, projectId: project.id, deletedAt: row?.deleted_at },
    });
    // The multipart upload is gone: R2 no longer accepts parts for it.
    const upload = env.MEDIA.resumeMultipartUpload(String(before?.source_key), String(before?.upload_r2_id));
    await expect(upload.uploadPart(2, new Uint8Array([1]))).rejects.toThrow();

    for (const check of [
      api(`/v1/videos/${video.id}`, bearer(key)),
      api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" })),
    ]) {
      const answer = await check;
      expect(answer.status).toBe(404);
      expect(await errorCode(answer)).toBe("video_not_found");
    }
    expect(await eventsOf(video.id)).toHaveLength(1);
  });

  it("is refused while an upload completion is in flight", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    await env.DB.prepare("UPDATE videos SET status = 'upload_completing', completion_lease_until = ? WHERE id = ?")
      .bind(new Date(Date.now() + 60_000).toISOString(), video.id)
      .run();
    const response = await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }));
    expect(response.status).toBe(409);
    expect(await errorCode(response)).toBe("upload_completion_in_progress");
    expect((await videoRow(video.id))?.deleted_at).toBeNull();
    expect(await eventsOf(video.id)).toHaveLength(0);
  });

  it("deletes an uploaded video", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const part = (await (await putPart(key, video.id, 1, new Uint8Array([1]))).json()) as { etag: string };
    await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag: part.etag }] })),
    );
    expect((await api(`/v1/videos/${video.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(await eventsOf(video.id)).toHaveLength(1);
  });

  it("works under cookie auth with projectId", async () => {
    const { session, project, key } = await newWorkspace();
    const { video } = await newVideo(key);
    const response = await api(
      `/v1/videos/${video.id}?projectId=${project.id}`,
      withCookie(session, { method: "DELETE" }),
    );
    expect(response.status).toBe(204);
  });

  it("cannot touch another project's video", async () => {
    const mine = await newWorkspace();
    const theirs = await newWorkspace();
    const { video } = await newVideo(theirs.key);
    const response = await api(`/v1/videos/${video.id}`, bearer(mine.key, { method: "DELETE" }));
    expect(await errorCode(response)).toBe("video_not_found");
    expect((await videoRow(video.id))?.deleted_at).toBeNull();
  });
});

describe("the scheduled sweeper", () => {
  it("aborts multipart uploads that a delete could not abort", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const row = await videoRow(video.id);
    // As a delete whose R2 abort failed leaves it: deleted, its upload still recorded.
    await env.DB.prepare("UPDATE videos SET deleted_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), video.id)
      .run();
    await runScheduled();
    expect((await videoRow(video.id))?.upload_r2_id).toBeNull();
    const upload = env.MEDIA.resumeMultipartUpload(String(row?.source_key), String(row?.upload_r2_id));
    await expect(upload.uploadPart(1, new Uint8Array([1]))).rejects.toThrow();
  });
});

describe("projects and videos", () => {
  it("keeps each project's videos apart", async () => {
    const { session, key } = await newWorkspace();
    const second = await newProject(session, "second");
    const secondKey = await newKey(session, second.id);
    await newVideos(key, 2);
    await newVideos(secondKey, 1);
    const page = (await (await api("/v1/videos", bearer(secondKey))).json()) as { data: VideoBody[] };
    expect(page.data).toHaveLength(1);
    expect(page.data[0]?.projectId).toBe(second.id);
  });
});

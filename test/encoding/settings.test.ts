import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { stripMetadata } from "../../src/images/strip";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, newKey, newProject, newSession, type Session, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";
import { greyPng, greyRows, zlib } from "../support/images";

type Settings = {
  enabledResolutions: string[];
  mp4FallbackEnabled: boolean;
  outputCodecs: string[];
  watermark: { enabled: boolean; position: string; opacity: number; imageKey: string | null };
  updatedAt: string;
};

async function setUp() {
  const session = await newSession();
  const project = await newProject(session);
  return { session, projectId: project.id, path: `/v1/projects/${project.id}/encoding-settings` };
}

async function patch(session: Session, path: string, body: unknown, headers: Record<string, string> = {}) {
  return api(path, withCookie(session, json("PATCH", body, headers)));
}

async function uploadWatermark(session: Session, path: string, bytes: Uint8Array, type = "image/png") {
  return api(
    `${path}/watermark-image`,
    withCookie(session, { method: "PUT", body: bytes, headers: { "content-type": type } }),
  );
}

describe("GET encoding settings", () => {
  it("returns the defaults of a new project, with updatedAt and an ETag", async () => {
    const { session, path } = await setUp();
    const response = await api(path, withCookie(session));
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe('"1"');
    const settings = (await response.json()) as Settings;
    expect(settings).toEqual({
      enabledResolutions: ["360p", "720p", "1080p"],
      mp4FallbackEnabled: false,
      outputCodecs: ["h264"],
      watermark: { enabled: false, position: "top-right", opacity: 1, imageKey: null },
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it("is stored as the full document when the project is created", async () => {
    const { projectId } = await setUp();
    const row = await env.DB.prepare("SELECT document FROM encoding_settings WHERE project_id = ?")
      .bind(projectId)
      .first<{ document: string }>();
    expect(JSON.parse(row?.document ?? "null")).toMatchObject({
      outputCodecs: ["h264"],
      watermark: { imageKey: null },
    });
  });
});

describe("PATCH encoding settings", () => {
  it("changes only the sent keys and returns the full effective object", async () => {
    const { session, path } = await setUp();
    const before = (await (await api(path, withCookie(session))).json()) as Settings;
    const response = await patch(session, path, { mp4FallbackEnabled: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe('"2"');
    const after = (await response.json()) as Settings;
    expect(after).toEqual({ ...before, mp4FallbackEnabled: true, updatedAt: expect.any(String) });
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
    expect(await (await api(path, withCookie(session))).json()).toEqual(after);
  });

  it("deduplicates and sorts resolutions from low to high", async () => {
    const { session, path } = await setUp();
    const response = await patch(session, path, { enabledResolutions: ["2160p", "240p", "1080p", "240p", "480p"] });
    expect(((await response.json()) as Settings).enabledResolutions).toEqual(["240p", "480p", "1080p", "2160p"]);
  });

  it("merges the watermark per key", async () => {
    const { session, path } = await setUp();
    await patch(session, path, { watermark: { opacity: 0.5 } });
    const response = await patch(session, path, { watermark: { position: "bottom-left" } });
    expect(((await response.json()) as Settings).watermark).toEqual({
      enabled: false,
      position: "bottom-left",
      opacity: 0.5,
      imageKey: null,
    });
  });

  it("accepts opacity at both ends of its range and an empty patch", async () => {
    const { session, path } = await setUp();
    for (const opacity of [0, 1]) expect((await patch(session, path, { watermark: { opacity } })).status).toBe(200);
    expect((await patch(session, path, {})).status).toBe(200);
  });

  it.each([[["vp9"]], [["h264", "av1"]], [["H264"]]])(
    "answers codec_unavailable for outputCodecs %j",
    async (outputCodecs) => {
      const { session, path } = await setUp();
      const response = await patch(session, path, { outputCodecs });
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("codec_unavailable");
    },
  );

  it.each([
    ["an unknown key", { bitrate: 5 }, "bitrate"],
    ["an empty resolution list", { enabledResolutions: [] }, "enabledResolutions"],
    ["a bad resolution label", { enabledResolutions: ["4k"] }, "enabledResolutions.0"],
    ["a resolution of the wrong type", { enabledResolutions: "720p" }, "enabledResolutions"],
    ["a boolean as a string", { mp4FallbackEnabled: "true" }, "mp4FallbackEnabled"],
    ["null for a boolean", { mp4FallbackEnabled: null }, "mp4FallbackEnabled"],
    ["no codecs", { outputCodecs: [] }, "outputCodecs"],
    ["a repeated codec", { outputCodecs: ["h264", "h264"] }, "outputCodecs"],
    ["a codec that is not a string", { outputCodecs: [264] }, "outputCodecs.0"],
    ["a bad position", { watermark: { position: "middle" } }, "watermark.position"],
    ["an opacity over 1", { watermark: { opacity: 1.5 } }, "watermark.opacity"],
    ["a negative opacity", { watermark: { opacity: -0.1 } }, "watermark.opacity"],
    ["an opacity as a string", { watermark: { opacity: "1" } }, "watermark.opacity"],
    ["imageKey in the body", { watermark: { imageKey: "x" } }, "watermark.imageKey"],
    ["null for the watermark", { watermark: null }, "watermark"],
    ["an unknown watermark key", { watermark: { size: 3 } }, "watermark.size"],
    ["enabling the watermark with no image", { watermark: { enabled: true } }, "watermark.enabled"],
  ])("refuses %s with invalid_encoding_settings naming the field", async (_, body, field) => {
    const { session, path } = await setUp();
    const response = await patch(session, path, body);
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: { code: string; details: { path: string }[] } }).error;
    expect(error.code).toBe("invalid_encoding_settings");
    expect(error.details.map((detail) => detail.path)).toContain(field);
  });

  it("refuses an array or unparseable body, changing nothing", async () => {
    const { session, path } = await setUp();
    const array = await patch(session, path, [1]);
    expect(await errorCode(array)).toBe("invalid_encoding_settings");
    const broken = await patch(session, path, "{");
    expect(await errorCode(broken)).toBe("invalid_body");
    expect((await api(path, withCookie(session))).headers.get("etag")).toBe('"1"');
  });

  it("applies two concurrent patches of different keys both", async () => {
    const { session, path } = await setUp();
    const bodies = [
      { mp4FallbackEnabled: true },
      { enabledResolutions: ["480p"] },
      { watermark: { position: "center" } },
      { watermark: { opacity: 0.25 } },
    ];
    const responses = await Promise.all(bodies.map((body) => patch(session, path, body)));
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    const settings = (await (await api(path, withCookie(session))).json()) as Settings;
    expect(settings).toMatchObject({
      mp4FallbackEnabled: true,
      enabledResolutions: ["480p"],
      watermark: { position: "center", opacity: 0.25, enabled: false },
    });
    expect((await api(path, withCookie(session))).headers.get("etag")).toBe('"5"');
  });

  it("honours If-Match: the current ETag or * pass, a stale one gets 412", async () => {
    const { session, path } = await setUp();
    expect((await patch(session, path, { mp4FallbackEnabled: true }, { "if-match": '"1"' })).status).toBe(200);
    const stale = await patch(session, path, { mp4FallbackEnabled: false }, { "if-match": '"1"' });
    expect(stale.status).toBe(412);
    expect(await errorCode(stale)).toBe("precondition_failed");
    expect(((await (await api(path, withCookie(session))).json()) as Settings).mp4FallbackEnabled).toBe(true);
    expect((await patch(session, path, { mp4FallbackEnabled: false }, { "if-match": 'W/"7", "2"' })).status).toBe(200);
    expect((await patch(session, path, {}, { "if-match": "*" })).status).toBe(200);
    expect((await patch(session, path, {}, { "if-match": "garbage" })).status).toBe(412);
  });

  it("takes at most 2 D1 round trips", async () => {
    const { session, path } = await setUp();
    const db = new InstrumentedD1(env.DB);
    const response = await apiWith(
      { DB: db.binding },
      path,
      withCookie(session, json("PATCH", { watermark: { opacity: 0.3 } })),
    );
    expect(response.status).toBe(200);
    expect(db.roundTrips).toBeLessThanOrEqual(2);
  });

  it("is rate limited per session under its own policy", async () => {
    const { session, path } = await setUp();
    const response = await patch(session, path, {});
    expect(response.headers.get("ratelimit-policy")).toBe('"encoding_settings";q=60;w=60');
  });
});

describe("access", () => {
  it("refuses API keys, foreign and unknown projects", async () => {
    const { session, projectId, path } = await setUp();
    const key = await newKey(session, projectId);
    for (const init of [bearer(key), bearer(key, json("PATCH", {}))]) {
      const response = await api(path, init);
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("unauthorized");
    }
    const stranger = await newSession();
    for (const target of [
      path,
      "/v1/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV/encoding-settings",
      "/v1/projects/nope/encoding-settings",
    ]) {
      const read = await api(target, withCookie(stranger));
      expect(read.status).toBe(404);
      expect(await errorCode(read)).toBe("not_found");
      // The project check comes before the body is read.
      expect(await errorCode(await patch(stranger, target, { bogus: true }))).toBe("not_found");
    }
  });
});

describe("watermark image", () => {
  it("stores a PNG, sets imageKey, allows enabling, and replaces without leaving the old object", async () => {
    const { session, path, projectId } = await setUp();
    const first = await uploadWatermark(session, path, IMAGES.rgbaPng);
    expect(first.status).toBe(200);
    const firstKey = ((await first.json()) as Settings).watermark.imageKey ?? "";
    expect(firstKey).toMatch(new RegExp(`^projects/${projectId}/watermarks/[0-9A-Z]{26}\\.png$`));
    const stored = await env.MEDIA.get(firstKey);
    expect(new Uint8Array((await stored?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(
      stripMetadata(IMAGES.rgbaPng, "image/png"),
    );
    expect(stored?.httpMetadata?.contentType).toBe("image/png");

    expect((await patch(session, path, { watermark: { enabled: true } })).status).toBe(200);

    const second = await uploadWatermark(session, path, IMAGES.alphaWebp, "image/webp");
    const settings = (await second.json()) as Settings;
    expect(settings.watermark).toMatchObject({ enabled: true, imageKey: expect.stringMatching(/\.webp$/) });
    expect(await env.MEDIA.head(firstKey)).toBeNull();
  });

  it("DELETE clears the image, disables the watermark and deletes the object", async () => {
    const { session, path } = await setUp();
    const key =
      ((await (await uploadWatermark(session, path, IMAGES.rgbPng)).json()) as Settings).watermark.imageKey ?? "";
    await patch(session, path, { watermark: { enabled: true } });
    const response = await api(`${path}/watermark-image`, withCookie(session, { method: "DELETE" }));
    expect(response.status).toBe(200);
    expect(((await response.json()) as Settings).watermark).toMatchObject({ enabled: false, imageKey: null });
    expect(await env.MEDIA.head(key)).toBeNull();
    expect(await errorCode(await patch(session, path, { watermark: { enabled: true } }))).toBe(
      "invalid_encoding_settings",
    );
  });

  it.each([
    ["a JPEG", IMAGES.baselineJpg, "image/jpeg", 415, "unsupported_media_type"],
    ["no content type", IMAGES.rgbPng, "", 415, "unsupported_media_type"],
    ["PNG bytes declared as WebP", IMAGES.rgbPng, "image/webp", 400, "invalid_image"],
    ["a corrupted PNG", IMAGES.rgbPng.slice(0, 50), "image/png", 400, "invalid_image"],
    ["an empty body", new Uint8Array(0), "image/png", 400, "invalid_image"],
    ["more than 1 MiB", new Uint8Array(1024 * 1024 + 1), "image/png", 413, "payload_too_large"],
  ])("refuses %s", async (_, bytes, type, status, code) => {
    const { session, path } = await setUp();
    const response = await uploadWatermark(session, path, bytes, type);
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe(code);
    expect((await api(path, withCookie(session))).headers.get("etag")).toBe('"1"');
  });
});

describe("a watermark is one still picture of at most 4096×4096", () => {
  it.each([
    ["an APNG (acTL)", IMAGES.animatedPng, "image/png"],
    ["an animated WebP", IMAGES.animatedWebp, "image/webp"],
  ] as const)("refuses %s with invalid_image, the settings unchanged", async (_, bytes, type) => {
    const { session, path } = await setUp();
    const response = await uploadWatermark(session, path, bytes, type);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_image");
    const settings = (await (await api(path, withCookie(session))).json()) as Settings;
    expect(settings.watermark.imageKey).toBeNull();
  });

  it("takes 4096 pixels a side, and refuses one more either way", async () => {
    const { session, path } = await setUp();
    const png = async (width: number, height: number) => greyPng(width, height, await zlib(greyRows(width, height)));
    expect((await uploadWatermark(session, path, await png(4096, 2))).status).toBe(200);
    expect((await uploadWatermark(session, path, await png(2, 4096))).status).toBe(200);
    for (const [width, height] of [
      [4097, 2],
      [2, 4097],
    ] as const) {
      const response = await uploadWatermark(session, path, await png(width, height));
      expect(response.status, `${width}×${height}`).toBe(400);
      expect(await errorCode(response)).toBe("invalid_image");
    }
  });
});

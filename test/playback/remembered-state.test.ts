import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { deleteChapters, saveChapters } from "../../src/chapters/queries";
import { PLAYBACK_STATE_TTL_MS } from "../../src/lib/playback-cache";
import { captionsKey, customThumbnailKey } from "../../src/lib/storage-keys";
import { setVisibility } from "../../src/videos/queries";
import { finishAll, playable, probeFacts, withFakeEncoder } from "../encoding/pipeline/support";
import { IMAGES } from "../fixtures/images";
import { api, bearer, json, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { countingBindings } from "../support/round-trips";

const VTT = "WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nHello\n";
const JPEG = "image/jpeg";

/**
 * Playback at scale (docs/playback-at-scale.md) for the `/play/` and `/embed/` answers made from
 * the video's state and its caption tracks (the master playlist, the caption files, the current
 * thumbnail, the embed page): no D1 read of their own while the state is remembered (at most 5 s),
 * and a caption track or custom thumbnail changed through the API shows at once where it was
 * changed.
 */
describe("playback at scale: the remembered state serves the master, captions, thumbnail and embed page", () => {
  const encoder = withFakeEncoder();

  async function readyVideo() {
    const { key, session, project } = await newWorkspace();
    await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: false })),
    );
    const { id } = await playable(encoder(), key, probeFacts(6));
    await finishAll(encoder(), id);
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(key, json("POST", { expiresIn: 3600 })));
    const { token } = (await minted.json()) as { token: string };
    return { key, id, token, projectId: project.id };
  }

  function putTrack(key: string, id: string, language: string, body = VTT) {
    return api(
      `/v1/videos/${id}/captions/${language}`,
      bearer(key, { method: "PUT", body, headers: { "content-type": "text/vtt" } }),
    );
  }

  /** One GET through counting bindings: the answer (its body as text) and the round trips it made. */
  async function counted(path: string, headers: Record<string, string> = {}) {
    const counting = countingBindings();
    const response = await apiWith(counting.bindings, path, { headers });
    const text = new TextDecoder().decode(await response.arrayBuffer());
    return { response, text, trips: counting.counts() };
  }

  it("reads D1 once per video per 5 s for the master, captions, thumbnail and embed page, by id and token", async () => {
    const { key, id, token } = await readyVideo();
    expect((await putTrack(key, id, "en")).status).toBe(200);
    const first = await counted(`/play/${id}/master.m3u8`);
    expect(first.response.status).toBe(200);
    expect(first.text).toContain('TYPE=SUBTITLES,GROUP-ID="subs"');
    // The row and the tracks: one round trip.
    expect(first.trips.d1).toBe(1);
    for (const subject of [id, token]) {
      for (const file of [
        "master.m3u8",
        "captions/en.vtt",
        "captions/en.m3u8",
        "captions/en/seg_00000.vtt",
        "thumbnail",
      ]) {
        const again = await counted(`/play/${subject}/${file}`);
        expect(again.response.status, file).toBe(200);
        expect(again.trips.d1, file).toBe(0);
      }
      const embed = await counted(`/embed/${subject}`);
      expect(embed.response.status).toBe(200);
      expect(embed.text).toContain('<track kind="subtitles" srclang="en"');
      expect(embed.trips.d1).toBe(0);
    }
    // A language the video has no track of: 404, still no read.
    const none = await counted(`/play/${id}/captions/fr.vtt`);
    expect(none.response.status).toBe(404);
    expect(none.trips.d1).toBe(0);
    // A clip range and the master's conditional answers, from the remembered state too.
    const clip = await counted(`/play/${id}/master.m3u8?start=1&end=3`);
    expect(clip.response.status).toBe(200);
    expect(clip.text).toContain("360p/index.m3u8?start=1&end=3");
    expect(clip.trips.d1).toBe(0);
    const etag = first.response.headers.get("etag") as string;
    const notModified = await counted(`/play/${id}/master.m3u8`, { "if-none-match": etag });
    expect(notModified.response.status).toBe(304);
    expect(notModified.trips.d1).toBe(0);
    // Past 5 s, the state is read again, once.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + PLAYBACK_STATE_TTL_MS);
    expect((await counted(`/play/${id}/master.m3u8`)).trips.d1).toBe(1);
    expect((await counted(`/play/${id}/thumbnail`)).trips.d1).toBe(0);
  });

  it("shows a caption track added, replaced or deleted at once on the master, the embed page and its files", async () => {
    const { key, id } = await readyVideo();
    const before = await counted(`/play/${id}/master.m3u8`);
    expect(before.text).not.toContain("SUBTITLES");
    expect(before.response.headers.get("last-modified")).not.toBeNull();
    expect((await counted(`/play/${id}/master.m3u8`)).trips.d1).toBe(0);
    expect((await counted(`/play/${id}/captions/en.vtt`)).response.status).toBe(404);
    expect((await putTrack(key, id, "en")).status).toBe(200);
    const added = await counted(`/play/${id}/master.m3u8`);
    expect(added.text).toContain('LANGUAGE="en"');
    expect(added.trips.d1).toBe(1);
    // With tracks, no Last-Modified: the ETag answers conditional requests.
    expect(added.response.headers.get("last-modified")).toBeNull();
    expect((await counted(`/embed/${id}`)).text).toContain('srclang="en"');
    expect((await counted(`/play/${id}/captions/en.vtt`)).text).toBe(VTT);
    const replacedVtt = VTT.replace("Hello", "Bonjour");
    expect((await putTrack(key, id, "en", replacedVtt)).status).toBe(200);
    expect((await counted(`/play/${id}/captions/en.vtt`)).text).toBe(replacedVtt);
    expect((await counted(`/play/${id}/captions/en/seg_00000.vtt`)).text).toContain("Bonjour");
    const deleted = await api(`/v1/videos/${id}/captions/en`, bearer(key, { method: "DELETE" }));
    expect(deleted.status).toBe(204);
    const after = await counted(`/play/${id}/master.m3u8`);
    expect(after.text).not.toContain("SUBTITLES");
    expect(after.response.headers.get("etag")).toBe(before.response.headers.get("etag"));
    expect((await counted(`/embed/${id}`)).text).not.toContain('srclang="en"');
    for (const file of ["captions/en.vtt", "captions/en.m3u8", "captions/en/seg_00000.vtt"]) {
      expect((await counted(`/play/${id}/${file}`)).response.status, file).toBe(404);
    }
  });

  it("forgets the state in the write itself: a query function's change shows at once with nothing else called", async () => {
    const { id, projectId } = await readyVideo();
    const tenant = { projectId, mode: "both" } as const;
    expect((await counted(`/play/${id}/master.m3u8`)).response.status).toBe(200);
    expect((await counted(`/play/${id}/master.m3u8`)).trips.d1).toBe(0);
    // Private by the bulk action's query, not by a route: id URLs refuse from the next request.
    expect(await setVisibility(env.DB, tenant, [id], "private", Date.now())).toEqual(new Set([id]));
    expect((await counted(`/play/${id}/master.m3u8`)).response.status).toBe(403);
    expect(await setVisibility(env.DB, tenant, [id], "public", Date.now())).toEqual(new Set([id]));
    expect((await counted(`/play/${id}/master.m3u8`)).response.status).toBe(200);
    // Chapters saved and deleted by their queries show on chapters.vtt at once.
    await saveChapters(env.DB, tenant, id, [{ start: 0, title: "Opening" }], Date.now());
    expect((await counted(`/play/${id}/chapters.vtt`)).text).toContain("Opening");
    expect(await deleteChapters(env.DB, tenant, id)).toBe(true);
    expect((await counted(`/play/${id}/chapters.vtt`)).response.status).toBe(404);
  });

  it("follows another location's track change within 5 s, and its replaced file at once", async () => {
    const { key, id, projectId } = await readyVideo();
    expect((await putTrack(key, id, "en")).status).toBe(200);
    expect((await counted(`/play/${id}/captions/en.vtt`)).text).toBe(VTT);
    // Another location replaces the track (straight in D1 and R2): its old object is gone.
    const [old] = (await env.DB.prepare("SELECT object_key FROM captions WHERE video_id = ?").bind(id).all())
      .results as { object_key: string }[];
    const next = captionsKey(projectId, id, "elsewhere.vtt");
    const elsewhere = VTT.replace("Hello", "Elsewhere");
    await env.MEDIA.put(next, elsewhere);
    await env.DB.prepare("UPDATE captions SET object_key = ? WHERE video_id = ?").bind(next, id).run();
    await env.MEDIA.delete(old?.object_key as string);
    // The remembered track names an object no longer there: the state is read again, once.
    const replaced = await counted(`/play/${id}/captions/en.vtt`);
    expect(replaced.text).toBe(elsewhere);
    expect(replaced.trips.d1).toBe(1);
    // A track added elsewhere reaches the master within 5 s.
    await env.DB.prepare(
      `INSERT INTO captions (project_id, video_id, language, label, source, object_key, created_at, updated_at)
       VALUES (?, ?, 'fr', 'French', 'upload', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    )
      .bind(projectId, id, next)
      .run();
    const stale = await counted(`/play/${id}/master.m3u8`);
    expect(stale.text).not.toContain('LANGUAGE="fr"');
    expect(stale.trips.d1).toBe(0);
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + PLAYBACK_STATE_TTL_MS);
    expect((await counted(`/play/${id}/master.m3u8`)).text).toContain('LANGUAGE="fr"');
  });

  it("shows a custom thumbnail set or removed at once, and another location's within 5 s", async () => {
    const { key, id, token, projectId } = await readyVideo();
    const poster = await counted(`/play/${token}/thumbnail`);
    expect(poster.response.headers.get("content-type")).toBe(JPEG);
    expect((await counted(`/play/${token}/thumbnail`)).trips.d1).toBe(0);
    const set = await api(
      `/v1/videos/${id}/thumbnail`,
      bearer(key, { method: "PUT", body: IMAGES.rgbPng, headers: { "content-type": "image/png" } }),
    );
    expect(set.status).toBe(200);
    for (const subject of [token, id]) {
      const custom = await counted(`/play/${subject}/thumbnail`);
      expect(custom.response.status).toBe(200);
      expect(custom.response.headers.get("content-type")).toBe("image/png");
    }
    // Another location sets another image (straight in D1 and R2), deleting the one remembered here.
    const [old] = (await env.DB.prepare("SELECT custom_thumbnail_key FROM videos WHERE id = ?").bind(id).all())
      .results as { custom_thumbnail_key: string }[];
    const next = customThumbnailKey(projectId, id, "elsewhere.webp");
    await env.MEDIA.put(next, IMAGES.losslessWebp, { httpMetadata: { contentType: "image/webp" } });
    await env.DB.prepare("UPDATE videos SET custom_thumbnail_key = ? WHERE id = ?").bind(next, id).run();
    await env.MEDIA.delete(old?.custom_thumbnail_key as string);
    const elsewhere = await counted(`/play/${id}/thumbnail`);
    expect(elsewhere.response.headers.get("content-type")).toBe("image/webp");
    expect(elsewhere.trips.d1).toBe(1);
    const removed = await api(`/v1/videos/${id}/thumbnail`, bearer(key, { method: "DELETE" }));
    expect(removed.status).toBe(200);
    const back = await counted(`/play/${id}/thumbnail`);
    expect(back.response.headers.get("content-type")).toBe(JPEG);
    expect(back.text.length).toBe(poster.text.length);
  });
});

import { useCallback, useEffect, useId, useState } from "preact/hooks";
import { ApiFailure, api, type EncodingSettings, must, sendFile } from "../api";
import { Problem } from "../components";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { formatTime } from "../format";
import { describePatch, draftOf, POSITIONS, patchOf, RESOLUTIONS, type SettingsDraft } from "../settings-form";

type Read = { settings: EncodingSettings; etag: string | null };

/**
 * `Encoding settings` (contract section 8): saved with `If-Match`, so a save over settings that
 * changed elsewhere since this view read them is refused (412): the view then says so and shows
 * the current values, with the person's own choices written out, instead of overwriting.
 */
export function SettingsView(props: { projectId: string }) {
  const id = useId();
  const [read, setRead] = useState<Read | null>(null);
  const [draft, setDraft] = useState<SettingsDraft | null>(null);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [conflict, setConflict] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const params = { path: { projectId: props.projectId } };
  const url = `/v1/projects/${props.projectId}/encoding-settings`;

  const load = useCallback(async () => {
    const answer = await api.GET("/v1/projects/{projectId}/encoding-settings", { params });
    if (!answer.data)
      throw new ApiFailure(answer.response.status, "load", answer.error?.error.message ?? "Not loaded.");
    const next = { settings: answer.data, etag: answer.response.headers.get("etag") };
    setRead(next);
    setDraft(draftOf(next.settings));
    return next;
  }, [props.projectId]);
  useEffect(() => {
    load().catch((failure: unknown) => setProblems({ form: messageOf(failure), fields: {} }));
  }, [load]);

  if (!read || !draft) {
    return (
      <>
        <h1>Encoding settings</h1>
        {problems.form ? <Problem message={problems.form} /> : <p>Loading…</p>}
      </>
    );
  }

  const save = async (event: Event) => {
    event.preventDefault();
    setProblems(NO_PROBLEMS);
    setConflict(null);
    setSaved(null);
    const patch = patchOf(read.settings, draft);
    const answer = await api
      .PATCH("/v1/projects/{projectId}/encoding-settings", {
        params: { ...params, header: read.etag ? { "if-match": read.etag } : {} },
        body: patch,
      })
      .catch(() => null);
    if (answer === null) return setProblems({ form: "The service could not be reached. Try again.", fields: {} });
    if (answer.response.status === 412) {
      const mine = describePatch(patch);
      await load().catch(() => {});
      setConflict(
        `These settings were changed elsewhere since you opened them, so nothing was saved. The current values are shown now.${mine ? ` Your changes were: ${mine}. Make them again and save if you still want them.` : ""}`,
      );
      return;
    }
    if (!answer.data) {
      return setProblems(
        problemsOf(
          new ApiFailure(
            answer.response.status,
            answer.error?.error.code ?? "",
            answer.error?.error.message ?? "Not saved.",
            answer.error?.error.details ?? [],
          ),
          [
            "enabledResolutions",
            "mp4FallbackEnabled",
            "watermark.enabled",
            "watermark.position",
            "watermark.opacity",
            "watermark",
          ],
        ),
      );
    }
    setRead({ settings: answer.data, etag: answer.response.headers.get("etag") });
    setDraft(draftOf(answer.data));
    setSaved("Settings saved. New encodings use them; videos already encoded keep theirs.");
  };

  const watermarkImage = async (file: File | undefined, remove: boolean) => {
    setProblems(NO_PROBLEMS);
    try {
      if (remove) await must(api.DELETE("/v1/projects/{projectId}/encoding-settings/watermark-image", { params }));
      else if (file) await sendFile("PUT", `${url}/watermark-image`, file, file.type || "image/png");
      await load();
      setSaved(remove ? "Watermark image removed." : "Watermark image saved.");
    } catch (failure) {
      setProblems({ form: null, fields: { image: messageOf(failure) } });
    }
  };

  const set = (change: Partial<SettingsDraft>) => setDraft({ ...draft, ...change });
  const toggle = (resolution: (typeof RESOLUTIONS)[number], on: boolean) =>
    set({
      enabledResolutions: on
        ? [...draft.enabledResolutions, resolution]
        : draft.enabledResolutions.filter((r) => r !== resolution),
    });

  return (
    <>
      <h1>Encoding settings</h1>
      <p class="hint">Last changed {formatTime(read.settings.updatedAt)}.</p>
      {conflict && (
        <p class="error" role="alert">
          {conflict}
        </p>
      )}
      <form class="card" noValidate onSubmit={save}>
        <fieldset>
          <legend>Resolutions</legend>
          {RESOLUTIONS.map((resolution) => (
            <label key={resolution} class="inline">
              <input
                type="checkbox"
                checked={draft.enabledResolutions.includes(resolution)}
                onChange={(event) => toggle(resolution, event.currentTarget.checked)}
              />
              {resolution}
            </label>
          ))}
          {problems.fields.enabledResolutions && <span class="error">{problems.fields.enabledResolutions}</span>}
        </fieldset>
        <label class="inline">
          <input
            type="checkbox"
            checked={draft.mp4FallbackEnabled}
            onChange={(event) => set({ mp4FallbackEnabled: event.currentTarget.checked })}
          />
          MP4 fallback
        </label>
        <fieldset>
          <legend>Watermark</legend>
          <p class="hint">Image: {read.settings.watermark.imageKey ? "set" : "none"} (a PNG or WebP, at most 1 MiB).</p>
          <div class="field">
            <label for={`${id}-image`}>Watermark image</label>
            <input
              id={`${id}-image`}
              type="file"
              accept="image/png,image/webp"
              onChange={(event) => void watermarkImage(event.currentTarget.files?.[0], false)}
            />
            {problems.fields.image && <span class="error">{problems.fields.image}</span>}
          </div>
          {read.settings.watermark.imageKey && (
            <button type="button" onClick={() => void watermarkImage(undefined, true)}>
              Remove watermark image
            </button>
          )}
          <label class="inline">
            <input
              type="checkbox"
              checked={draft.watermarkEnabled}
              onChange={(event) => set({ watermarkEnabled: event.currentTarget.checked })}
            />
            Watermark enabled
          </label>
          {problems.fields["watermark.enabled"] && <span class="error">{problems.fields["watermark.enabled"]}</span>}
          <div class="field">
            <label for={`${id}-position`}>Position</label>
            <select
              id={`${id}-position`}
              value={draft.position}
              onChange={(event) => set({ position: event.currentTarget.value as SettingsDraft["position"] })}
            >
              {POSITIONS.map((position) => (
                <option key={position} value={position}>
                  {position}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={`${id}-opacity`}>Opacity</label>
            <input
              id={`${id}-opacity`}
              type="number"
              min={0}
              max={1}
              step={0.05}
              value={draft.opacity}
              onInput={(event) => set({ opacity: Number(event.currentTarget.value) })}
              aria-describedby={problems.fields["watermark.opacity"] ? `${id}-opacity-error` : undefined}
            />
            {problems.fields["watermark.opacity"] && (
              <span id={`${id}-opacity-error`} class="error">
                {problems.fields["watermark.opacity"]}
              </span>
            )}
          </div>
        </fieldset>
        <Problem message={problems.form} />
        {saved && <p role="status">{saved}</p>}
        <button type="submit" class="primary">
          Save settings
        </button>
      </form>
    </>
  );
}

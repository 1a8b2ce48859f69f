import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiFailure, api, type EncodingSettings, fileBody, must } from "../api";
import { Checkbox, CheckboxGroup, Field, Form, Problem, SelectField } from "../components";
import { POSITIONS, RESOLUTIONS, WATERMARK_TYPES } from "../enums";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { formatTime } from "../format";
import { describePatch, draftOf, patchOf, type SettingsDraft } from "../settings-form";

type Read = { settings: EncodingSettings; etag: string | null };

/**
 * `Encoding settings` (docs/encoding.md#encoding-settings): saved with `If-Match`, so a save over
 * settings that changed elsewhere since this view read them is refused (412): the view then says so
 * and shows the current values, with the person's own choices written out, instead of overwriting.
 */
export function SettingsView(props: { projectId: string }) {
  const [read, setRead] = useState<Read | null>(null);
  const [draft, setDraft] = useState<SettingsDraft | null>(null);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [conflict, setConflict] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const params = { path: { projectId: props.projectId } };

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

  const save = async () => {
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
      else if (file) {
        await must(
          api.PUT("/v1/projects/{projectId}/encoding-settings/watermark-image", {
            params,
            ...fileBody(file, file.type || "image/png"),
          }),
        );
      }
      await load();
      setSaved(remove ? "Watermark image removed." : "Watermark image saved.");
    } catch (failure) {
      setProblems({ form: null, fields: { image: messageOf(failure) } });
    }
  };

  const set = (change: Partial<SettingsDraft>) => setDraft({ ...draft, ...change });

  return (
    <>
      <h1>Encoding settings</h1>
      <p class="hint">Last changed {formatTime(read.settings.updatedAt)}.</p>
      {conflict && (
        <p class="error" role="alert">
          {conflict}
        </p>
      )}
      <Form class="card" onSubmit={save}>
        <CheckboxGroup
          legend="Resolutions"
          values={RESOLUTIONS}
          checked={draft.enabledResolutions}
          onChange={(enabledResolutions) => set({ enabledResolutions })}
          error={problems.fields.enabledResolutions}
        />
        <Checkbox
          label="MP4 fallback"
          checked={draft.mp4FallbackEnabled}
          onChange={(mp4FallbackEnabled) => set({ mp4FallbackEnabled })}
        />
        <fieldset>
          <legend>Watermark</legend>
          <p class="hint">Image: {read.settings.watermark.imageKey ? "set" : "none"} (a PNG or WebP, at most 1 MiB).</p>
          <Field
            label="Watermark image"
            type="file"
            accept={WATERMARK_TYPES.join(",")}
            onChange={(event) => void watermarkImage(event.currentTarget.files?.[0], false)}
            error={problems.fields.image}
          />
          {read.settings.watermark.imageKey && (
            <button type="button" onClick={() => void watermarkImage(undefined, true)}>
              Remove watermark image
            </button>
          )}
          <Checkbox
            label="Watermark enabled"
            checked={draft.watermarkEnabled}
            onChange={(watermarkEnabled) => set({ watermarkEnabled })}
          />
          {problems.fields["watermark.enabled"] && <span class="error">{problems.fields["watermark.enabled"]}</span>}
          <SelectField
            label="Position"
            value={draft.position}
            options={POSITIONS}
            onChange={(position) => set({ position })}
            error={problems.fields["watermark.position"]}
          />
          <Field
            label="Opacity"
            type="number"
            min={0}
            max={1}
            step={0.05}
            value={draft.opacity}
            onInput={(event) => set({ opacity: Number(event.currentTarget.value) })}
            error={problems.fields["watermark.opacity"]}
          />
        </fieldset>
        <Problem message={problems.form} />
        {saved && <p role="status">{saved}</p>}
        <button type="submit" class="primary">
          Save settings
        </button>
      </Form>
    </>
  );
}

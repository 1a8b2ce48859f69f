import { useCallback, useEffect, useId, useState } from "preact/hooks";
import { api, must, type Video } from "../api";
import { type ChapterRow, chapterFields, chaptersOf, newRow, rowsOf } from "../chapters-form";
import { Field, Form, Problem } from "../components";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import type { Scope } from "../mode";

/**
 * `Chapters` (docs/chapters.md): a `Start` and a `Title` per row, `Add chapter`, and `Save chapters`,
 * which saves the rows as the video's list (none: removes it). A refused list keeps what was typed
 * and shows the API's words next to the field each names.
 */
export function Chapters(props: { video: Video; scope: Scope }) {
  const headingId = useId();
  const [rows, setRows] = useState<ChapterRow[]>([]);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [saved, setSaved] = useState<string | null>(null);
  const videoId = props.video.id;
  const params = { path: { id: videoId }, query: props.scope };

  const load = useCallback(async () => {
    try {
      const answer = await must(api.GET("/v1/videos/{id}/chapters", { params }));
      setRows(rowsOf(answer.chapters));
    } catch (failure) {
      setProblems({ form: messageOf(failure), fields: {} });
    }
  }, [videoId, props.scope.projectId, props.scope.mode]);
  useEffect(() => {
    void load();
  }, [load]);

  const edit = (key: number, change: Partial<ChapterRow>) =>
    setRows((current) => current.map((row) => (row.key === key ? { ...row, ...change } : row)));

  const save = async () => {
    setProblems(NO_PROBLEMS);
    setSaved(null);
    const list = chaptersOf(rows);
    if ("problems" in list) return setProblems(list.problems);
    try {
      if (list.chapters.length === 0) {
        await must(api.DELETE("/v1/videos/{id}/chapters", { params }));
        setSaved("Chapters removed.");
      } else {
        const answer = await must(api.PUT("/v1/videos/{id}/chapters", { params, body: { chapters: list.chapters } }));
        setRows(rowsOf(answer.chapters));
        setSaved("Chapters saved.");
      }
    } catch (failure) {
      setProblems(problemsOf(failure, chapterFields(rows.length)));
    }
  };

  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>Chapters</h2>
      <Form onSubmit={save}>
        {rows.length === 0 && <p class="hint">No chapters yet. The first starts at 0 seconds.</p>}
        <Problem message={problems.fields.chapters} />
        {rows.map((row, index) => (
          <fieldset key={row.key} class="chapter-row">
            <legend>Chapter {index + 1}</legend>
            <Field
              label="Start"
              name="start"
              inputMode="decimal"
              hint="Seconds, or minutes:seconds"
              value={row.start}
              onInput={(event) => edit(row.key, { start: event.currentTarget.value })}
              error={problems.fields[`chapters.${index}.start`]}
            />
            <Field
              label="Title"
              name="title"
              value={row.title}
              onInput={(event) => edit(row.key, { title: event.currentTarget.value })}
              error={problems.fields[`chapters.${index}.title`]}
            />
            <button type="button" onClick={() => setRows((current) => current.filter((one) => one.key !== row.key))}>
              Remove<span class="visually-hidden"> chapter {index + 1}</span>
            </button>
          </fieldset>
        ))}
        <div class="actions">
          <button type="button" onClick={() => setRows((current) => [...current, newRow(current.length === 0)])}>
            Add chapter
          </button>
          <button type="submit" class="primary">
            Save chapters
          </button>
        </div>
        <Problem message={problems.form} />
        {saved && <p role="status">{saved}</p>}
      </Form>
    </section>
  );
}

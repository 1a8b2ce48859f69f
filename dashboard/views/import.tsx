import { useState } from "preact/hooks";
import { api, must } from "../api";
import { Field, Form, Problem } from "../components";
import { type FormProblems, NO_PROBLEMS, problemsOf } from "../errors";
import type { Scope } from "../mode";

/**
 * Import a video from a URL (docs/imports.md, `sourceUrl`): the service fetches the file itself;
 * the new video shows in the list as `importing`, then goes on as an upload does.
 */
export function ImportFromUrl(props: { scope: Scope; onImported: () => void }) {
  const [url, setUrl] = useState("");
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [started, setStarted] = useState<string | null>(null);
  const submit = async () => {
    setProblems(NO_PROBLEMS);
    setStarted(null);
    try {
      const title = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "").replace(/\.[^.]*$/, "");
      const made = await must(
        api.POST("/v1/videos", {
          params: { query: props.scope },
          body: { sourceUrl: url, ...(title ? { title } : {}) },
        }),
      );
      setStarted(`Importing ${made.video.title ?? made.video.id}.`);
      setUrl("");
      props.onImported();
    } catch (error) {
      setProblems(
        error instanceof TypeError
          ? { form: null, fields: { sourceUrl: "Enter a full URL." } }
          : problemsOf(error, ["sourceUrl"]),
      );
    }
  };
  return (
    <Form class="card import" onSubmit={submit}>
      <Field
        label="Video URL"
        name="sourceUrl"
        type="url"
        placeholder="https://media.example.com/intro.mp4"
        hint="The service fetches the file itself"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        error={problems.fields.sourceUrl}
      />
      <button type="submit">Import</button>
      <Problem message={problems.form} />
      {started && <p role="status">{started}</p>}
    </Form>
  );
}

import { useState } from "preact/hooks";
import { api, must, type Video } from "../api";
import { Field, Form, Problem } from "../components";
import { type FormProblems, NO_PROBLEMS, problemsOf } from "../errors";
import type { Scope } from "../mode";
import { navigate } from "../nav";
import { paths } from "../route";

/**
 * A frame-accurate clip of the video as a new video
 * (docs/import-clips-search.md#clips-as-videos-clipof, `clipOf`): its span in seconds, then the new
 * video's page. Offered once the video is processing or ready.
 */
export function CutClip(props: { video: Video; scope: Scope }) {
  const { video } = props;
  const [start, setStart] = useState("0");
  const [end, setEnd] = useState("");
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  if (video.status !== "processing" && video.status !== "ready") return null;
  const create = async () => {
    setProblems(NO_PROBLEMS);
    try {
      const made = await must(
        api.POST("/v1/videos", {
          params: { query: props.scope },
          body: {
            clipOf: { videoId: video.id, start: Number(start), end: Number(end) },
            title: `${video.title ?? video.id} (clip)`,
            visibility: video.visibility,
          },
        }),
      );
      navigate(paths.video(props.scope.projectId, made.video.id));
    } catch (error) {
      setProblems(problemsOf(error, ["clipOf.start", "clipOf.end"]));
    }
  };
  const most = video.duration ?? undefined;
  return (
    <Form class="card" onSubmit={create}>
      <h2>Clip</h2>
      <p>A new video of a span of this one, cut at the exact frames; it stays when this video is deleted.</p>
      <Field
        label="Clip start"
        name="start"
        type="number"
        min={0}
        max={most}
        step="any"
        hint="Seconds"
        value={start}
        onInput={(event) => setStart(event.currentTarget.value)}
        error={problems.fields["clipOf.start"]}
      />
      <Field
        label="Clip end"
        name="end"
        type="number"
        min={0}
        max={most}
        step="any"
        hint="Seconds, at least 1 after the start"
        value={end}
        onInput={(event) => setEnd(event.currentTarget.value)}
        error={problems.fields["clipOf.end"]}
      />
      <button type="submit">Create clip</button>
      <Problem message={problems.form} />
    </Form>
  );
}

import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type CaptionTrack, fileBody, must, type Video } from "../api";
import { Field, Form, Problem, SelectField } from "../components";
import { captionsType } from "../embed";
import { CAPTIONS_EXTENSIONS, THUMBNAIL_TYPES } from "../enums";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { Table } from "../lists";
import type { Scope } from "../mode";

/** `Custom thumbnail` (a JPEG, PNG or WebP) and `Remove custom thumbnail` (docs/images.md). */
export function CustomThumbnail(props: { video: Video; scope: Scope; onChanged: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const { video } = props;
  const upload = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    setStatus("Uploading…");
    try {
      await must(
        api.PUT("/v1/videos/{id}/thumbnail", {
          params: { path: { id: video.id }, query: props.scope },
          ...fileBody(file, file.type || "image/jpeg"),
        }),
      );
      setStatus("Custom thumbnail saved.");
      props.onChanged();
    } catch (failure) {
      setStatus(null);
      setError(messageOf(failure));
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await must(api.DELETE("/v1/videos/{id}/thumbnail", { params: { path: { id: video.id }, query: props.scope } }));
      setStatus("Custom thumbnail removed: the poster frame is back.");
      props.onChanged();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const shown = video.visibility !== "private";
  return (
    <section class="card">
      <h2>Thumbnail</h2>
      <div class="thumb-row">
        {shown && <img src={video.thumbnail.url} alt="The video's current thumbnail" width={160} height={90} />}
        <div>
          <p class="hint">
            Now: {video.thumbnail.source === "custom" ? "a custom image" : "the automatic poster frame"}.
          </p>
          <Field
            label="Custom thumbnail"
            type="file"
            accept={THUMBNAIL_TYPES.join(",")}
            onChange={(event) => void upload(event.currentTarget.files?.[0])}
            error={error ?? undefined}
          />
          <button type="button" disabled={video.thumbnail.source !== "custom"} onClick={remove}>
            Remove custom thumbnail
          </button>
          {status && <p role="status">{status}</p>}
        </div>
      </div>
    </section>
  );
}

/**
 * The languages offered for generated captions: the ones most videos are spoken in. The API says
 * which the speech engine hears (a language it does not is refused in its words, shown here).
 */
const GENERATED_LANGUAGES = [
  ["en", "English"],
  ["es", "Spanish"],
  ["fr", "French"],
  ["de", "German"],
  ["pt", "Portuguese"],
  ["it", "Italian"],
  ["nl", "Dutch"],
  ["ja", "Japanese"],
  ["zh", "Chinese"],
  ["hi", "Hindi"],
] as const;

/** How often the tracks are read again while one is being generated. */
const REFRESH_MS = 3_000;

/** A track's status as shown: its API word, and for an errored one why. */
function statusOf(track: CaptionTrack): string {
  return track.status === "errored" && track.error ? `errored: ${track.error.message}` : track.status;
}

/**
 * `Captions`: a `.vtt` or `.srt` file with its `Language`, `Generate captions` from the speech with
 * its `Language` choice, and the tracks with their status (read again until none is processing),
 * `Download` for a ready generated one (to correct it and put it back) and `Delete`.
 */
export function Captions(props: { video: Video; scope: Scope }) {
  const [tracks, setTracks] = useState<CaptionTrack[]>([]);
  const [language, setLanguage] = useState("");
  const [spoken, setSpoken] = useState<string>(GENERATED_LANGUAGES[0][0]);
  const [file, setFile] = useState<File | null>(null);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [generateError, setGenerateError] = useState<string | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const videoId = props.video.id;
  const load = useCallback(async () => {
    try {
      const list = await must(
        api.GET("/v1/videos/{id}/captions", { params: { path: { id: videoId }, query: props.scope } }),
      );
      setTracks(list.data);
      setListError(null);
    } catch (failure) {
      setListError(messageOf(failure));
    }
  }, [videoId, props.scope.projectId, props.scope.mode]);
  useEffect(() => {
    void load();
  }, [load]);
  const making = tracks.some((track) => track.status === "processing");
  useEffect(() => {
    if (!making) return;
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [making, load]);

  const add = async () => {
    setProblems(NO_PROBLEMS);
    const type = file ? captionsType(file.name) : null;
    if (!file || !type) {
      setProblems({ form: null, fields: { file: "Choose a .vtt or .srt file." } });
      return;
    }
    if (!language.trim()) {
      setProblems({ form: null, fields: { language: "Type the captions' language, e.g. en or pt-BR." } });
      return;
    }
    try {
      await must(
        api.PUT("/v1/videos/{id}/captions/{language}", {
          params: { path: { id: videoId, language: language.trim() }, query: props.scope },
          ...fileBody(file, type),
        }),
      );
      setLanguage("");
      await load();
    } catch (failure) {
      const found = problemsOf(failure, ["language", "label"]);
      setProblems(found);
    }
  };
  const generate = async () => {
    setGenerateError(null);
    try {
      await must(
        api.POST("/v1/videos/{id}/captions/{language}/generate", {
          params: { path: { id: videoId, language: spoken }, query: props.scope },
        }),
      );
      await load();
    } catch (failure) {
      setGenerateError(messageOf(failure));
    }
  };
  const remove = async (track: CaptionTrack) => {
    try {
      await must(
        api.DELETE("/v1/videos/{id}/captions/{language}", {
          params: { path: { id: videoId, language: track.language }, query: props.scope },
        }),
      );
      await load();
    } catch (failure) {
      setListError(messageOf(failure));
    }
  };
  const download = async (track: CaptionTrack) => {
    try {
      // A private video's files are read through a playback token.
      let url = track.url;
      if (props.video.visibility === "private") {
        const minted = await must(
          api.POST("/v1/videos/{id}/playback-tokens", {
            params: { path: { id: videoId }, query: props.scope },
            body: { expiresIn: 60 },
          }),
        );
        url = url.replace(`/play/${videoId}/`, `/play/${minted.token}/`);
      }
      const response = await fetch(url);
      if (!response.ok) throw new Error(`The captions could not be downloaded (HTTP ${response.status}).`);
      saveAs(await response.blob(), `${props.video.title ?? videoId}.${track.language}.vtt`);
    } catch (failure) {
      setListError(messageOf(failure));
    }
  };
  return (
    <section class="card">
      <h2>Captions</h2>
      <Problem message={listError} />
      <Table
        class="simple"
        cellLabels={false}
        rows={tracks}
        rowKey={(track) => track.language}
        empty={<p class="hint">No captions yet.</p>}
        columns={[
          { heading: "Language", cell: (track) => track.language },
          { heading: "Label", cell: (track) => track.label },
          { heading: "Status", cell: statusOf },
          {
            heading: "Actions",
            hidden: true,
            class: "actions",
            cell: (track) => (
              <>
                {track.source === "generated" && track.status === "ready" && (
                  <button type="button" onClick={() => download(track)}>
                    Download
                  </button>
                )}
                <button type="button" onClick={() => remove(track)}>
                  Delete
                </button>
              </>
            ),
          },
        ]}
      />
      <Form onSubmit={generate}>
        <SelectField label="Language" value={spoken} options={GENERATED_LANGUAGES} onChange={setSpoken} />
        <Problem message={generateError} />
        <button type="submit">Generate captions</button>
        <p class="hint">Made from the video's speech; download a ready one to correct it, then upload it again.</p>
      </Form>
      <Form onSubmit={add}>
        <Field
          label="Captions"
          type="file"
          accept={[...Object.values(CAPTIONS_EXTENSIONS), ...Object.keys(CAPTIONS_EXTENSIONS)].join(",")}
          onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)}
          error={problems.fields.file}
        />
        <Field
          label="Language"
          name="language"
          placeholder="en"
          value={language}
          onInput={(event) => setLanguage(event.currentTarget.value)}
          error={problems.fields.language}
        />
        <Problem message={problems.form} />
        <button type="submit">Add captions</button>
      </Form>
    </section>
  );
}

/** Saves `blob` as a file named `name`, as a link with `download` does. */
function saveAs(blob: Blob, name: string) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1_000);
}

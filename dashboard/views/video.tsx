import { useCallback, useEffect, useState } from "preact/hooks";
import { api, must, type Video } from "../api";
import { ConfirmDialog, Field, Form, Problem, SelectField } from "../components";
import { VISIBILITIES, type Visibility } from "../enums";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { formatDuration, formatTime } from "../format";
import { type Scope, useMode } from "../mode";
import { navigate } from "../nav";
import { paths } from "../route";
import { POLL_MS, parseTags } from "../video-list";
import { VideoAnalytics } from "./analytics";
import { Chapters } from "./video-chapters";
import { CutClip } from "./video-clip";
import { Captions, CustomThumbnail } from "./video-media";
import { Share } from "./video-share";

/** One video (docs/dashboard.md): player, title, visibility, delete, media, chapters, sharing, analytics. */
export function VideoView(props: { projectId: string; videoId: string }) {
  const mode = useMode();
  const [video, setVideo] = useState<Video | null>(null);
  const [error, setError] = useState<string | null>(null);
  const scope = { projectId: props.projectId, mode };

  const load = useCallback(async () => {
    try {
      const found = await must(api.GET("/v1/videos/{id}", { params: { path: { id: props.videoId }, query: scope } }));
      setVideo(found);
      setError(null);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, [props.videoId, props.projectId, mode]);

  useEffect(() => {
    void load();
  }, [load]);
  // Until it is ready or errored, the video is read again so its status and player follow.
  useEffect(() => {
    if (!video || video.status === "ready" || video.status === "errored") return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void load();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [video, load]);

  if (!video) {
    return (
      <>
        <h1>Video</h1>
        {error ? <Problem message={error} /> : <p>Loading…</p>}
        <a href={paths.videos(props.projectId)}>Back to videos</a>
      </>
    );
  }
  return (
    <>
      <p>
        <a href={paths.videos(props.projectId)}>Back to videos</a>
      </p>
      <h1>{video.title ?? video.id}</h1>
      <Problem message={error} />
      <div class="video-layout">
        <div>
          <Player video={video} projectId={props.projectId} />
          <Details video={video} />
        </div>
        <div>
          <Edit video={video} scope={scope} onSaved={setVideo} />
          <Share video={video} scope={scope} />
        </div>
      </div>
      <CustomThumbnail video={video} scope={scope} onChanged={load} />
      <Captions video={video} scope={scope} />
      <Chapters video={video} scope={scope} />
      <CutClip video={video} scope={scope} />
      <VideoAnalytics videoId={video.id} projectId={props.projectId} />
      <DeleteVideo video={video} scope={scope} />
    </>
  );
}

function Player(props: { video: Video; projectId: string }) {
  const { video } = props;
  const [token, setToken] = useState<string | null>(null);
  const playable = video.playback !== null;
  const isPrivate = video.visibility === "private";
  useEffect(() => {
    if (!playable || !isPrivate) return setToken(null);
    must(
      api.POST("/v1/videos/{id}/playback-tokens", {
        params: { path: { id: video.id }, query: { projectId: props.projectId } },
        body: { expiresIn: 3600 },
      }),
    )
      .then((created) => setToken(created.token))
      .catch(() => setToken(null));
  }, [video.id, playable, isPrivate, props.projectId]);
  if (!playable) {
    return <p class="player-placeholder">The player appears here once the video is playable ({video.status}).</p>;
  }
  const subject = isPrivate ? token : video.id;
  if (!subject) return <p class="player-placeholder">Loading the player…</p>;
  const origin = new URL(video.thumbnail.url).origin;
  return (
    <iframe
      class="player"
      src={`${origin}/embed/${subject}`}
      title={`Player: ${video.title ?? video.id}`}
      allow="autoplay; fullscreen; picture-in-picture"
      allowFullScreen
    />
  );
}

function Details(props: { video: Video }) {
  const { video } = props;
  return (
    <dl class="details">
      <dt>Status</dt>
      <dd>
        <span class={`status status-${video.status}`}>{video.status}</span>
        {video.error && ` (${video.error.message})`}
      </dd>
      <dt>Duration</dt>
      <dd>{formatDuration(video.duration)}</dd>
      <dt>Size</dt>
      <dd>{video.width && video.height ? `${video.width}×${video.height}` : "–"}</dd>
      <dt>Renditions</dt>
      <dd>{video.renditions.length > 0 ? video.renditions.map((r) => r.resolution).join(", ") : "none yet"}</dd>
      <dt>Mode</dt>
      <dd>{video.livemode ? "live" : "test"}</dd>
      <dt>Created</dt>
      <dd>{formatTime(video.createdAt)}</dd>
    </dl>
  );
}

function Edit(props: { video: Video; scope: Scope; onSaved: (video: Video) => void }) {
  const [title, setTitle] = useState(props.video.title ?? "");
  const [tags, setTags] = useState(props.video.tags.join(", "));
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [saved, setSaved] = useState<string | null>(null);
  const patch = async (body: { title?: string | null; tags?: string[]; visibility?: Visibility }, what: string) => {
    setProblems(NO_PROBLEMS);
    setSaved(null);
    try {
      const video = await must(
        api.PATCH("/v1/videos/{id}", { params: { path: { id: props.video.id }, query: props.scope }, body }),
      );
      props.onSaved(video);
      setSaved(`${what} saved.`);
    } catch (error) {
      setProblems(problemsOf(error, ["title", "tags", "visibility"]));
    }
  };
  return (
    <Form
      class="card"
      onSubmit={() => patch({ title: title.trim() === "" ? null : title, tags: parseTags(tags) }, "Title and tags")}
    >
      <Field
        label="Title"
        name="title"
        maxLength={200}
        value={title}
        onInput={(event) => setTitle(event.currentTarget.value)}
        error={problems.fields.title}
      />
      <Field
        label="Tags"
        name="tags"
        hint="Separated by commas"
        value={tags}
        onInput={(event) => setTags(event.currentTarget.value)}
        error={problems.fields.tags}
      />
      <button type="submit">Save</button>
      <SelectField
        label="Visibility"
        value={props.video.visibility}
        options={VISIBILITIES}
        onChange={(visibility) => void patch({ visibility }, "Visibility")}
        error={problems.fields.visibility}
      />
      <Problem message={problems.form} />
      {saved && <p role="status">{saved}</p>}
    </Form>
  );
}

function DeleteVideo(props: { video: Video; scope: Scope }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setConfirming(false);
    try {
      await must(api.DELETE("/v1/videos/{id}", { params: { path: { id: props.video.id }, query: props.scope } }));
      navigate(paths.videos(props.scope.projectId));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <section class="card danger-zone">
      <h2>Delete</h2>
      <button type="button" class="danger" onClick={() => setConfirming(true)}>
        Delete video
      </button>
      <Problem message={error} />
      <ConfirmDialog
        open={confirming}
        title="Delete this video?"
        confirm="Delete"
        onConfirm={remove}
        onCancel={() => setConfirming(false)}
      >
        <p>Its source, renditions, thumbnails and captions are removed, and this cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}

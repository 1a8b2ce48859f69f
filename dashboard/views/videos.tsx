import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, must, type Video } from "../api";
import { Field, Problem, SelectField } from "../components";
import { STATUSES, type VideoStatus, type Visibility } from "../enums";
import { messageOf } from "../errors";
import { formatDuration, formatTime } from "../format";
import { type Column, Pager, Table } from "../lists";
import { useMode } from "../mode";
import { paths } from "../route";
import { type BulkOutcome, PageCursor, POLL_MS, summarize } from "../video-list";
import { BulkBar } from "./bulk";
import { ImportFromUrl } from "./import";
import { Uploads } from "./uploads";

const PAGE_SIZE = 20;

/**
 * The project's videos (docs/dashboard.md): newest first, paged, filtered by status; the list is
 * read again every POLL_MS while the tab is visible, so statuses change without a reload.
 */
export function VideosView(props: { projectId: string }) {
  const mode = useMode();
  const [status, setStatus] = useState<VideoStatus | "">("");
  const [search, setSearch] = useState("");
  const [tag, setTag] = useState("");
  const [pages, setPages] = useState(() => new PageCursor());
  const [videos, setVideos] = useState<Video[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [outcome, setOutcome] = useState<BulkOutcome | null>(null);
  const generation = useRef(0);

  const load = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const query = {
        projectId: props.projectId,
        mode,
        limit: PAGE_SIZE,
        ...(status ? { status } : {}),
        ...(search.trim() ? { search: search.trim() } : {}),
        ...(tag.trim() ? { tag: tag.trim() } : {}),
        ...(pages.current ? { cursor: pages.current } : {}),
      };
      const page = await must(api.GET("/v1/videos", { params: { query } }));
      if (mine !== generation.current) return;
      setVideos(page.data);
      setNextCursor(page.nextCursor);
      setError(null);
    } catch (failure) {
      if (mine === generation.current) setError(messageOf(failure));
    }
  }, [props.projectId, mode, status, search, tag, pages]);

  useEffect(() => {
    void load();
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void load();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [load]);

  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };

  const runBulk = async (action: "delete" | Visibility) => {
    const videoIds = [...selected];
    const body =
      action === "delete"
        ? { action: "delete" as const, videoIds }
        : { action: "set_visibility" as const, videoIds, visibility: action };
    try {
      const answer = await must(
        api.POST("/v1/videos/bulk", { params: { query: { projectId: props.projectId, mode } }, body }),
      );
      setOutcome(summarize(action, answer.results, videos ?? []));
      setSelected(new Set([...selected].filter((id) => answer.results.some((r) => r.id === id && !r.ok))));
    } catch (failure) {
      setOutcome({ action, lines: [], error: messageOf(failure) });
    }
    void load();
  };

  return (
    <>
      <h1>Videos</h1>
      <Uploads projectId={props.projectId} mode={mode} onFinished={load} />
      <ImportFromUrl scope={{ projectId: props.projectId, mode }} onImported={load} />
      <div class="toolbar">
        <SelectField
          inline
          label="Status"
          value={status}
          options={[["", "All statuses"], ...STATUSES]}
          onChange={(value) => {
            setStatus(value);
            setPages(new PageCursor());
          }}
        />
        {/* Applied on Enter or when the field is left (change), not on every key. */}
        <Field
          inline
          label="Search"
          type="search"
          placeholder="Title words"
          value={search}
          onChange={(event) => {
            setSearch(event.currentTarget.value);
            setPages(new PageCursor());
          }}
        />
        <Field
          inline
          label="Tag"
          type="search"
          value={tag}
          onChange={(event) => {
            setTag(event.currentTarget.value);
            setPages(new PageCursor());
          }}
        />
      </div>
      <BulkBar count={selected.size} onAction={runBulk} outcome={outcome} />
      <Problem message={error} />
      <Table
        class="videos"
        caption="Videos, newest first"
        rows={videos}
        rowKey={(video) => video.id}
        empty={
          <p>
            {status || search.trim() || tag.trim()
              ? "No videos match these filters."
              : "No videos yet. Upload one above."}
          </p>
        }
        columns={columnsOf(props.projectId, selected, toggle)}
      />
      <Pager pages={pages} next={nextCursor} onChange={setPages} />
    </>
  );
}

/** The table's columns: a checkbox named by the title, the thumbnail once it is shown publicly, and the video's facts. */
function columnsOf(
  projectId: string,
  selected: ReadonlySet<string>,
  onToggle: (id: string, on: boolean) => void,
): Column<Video>[] {
  const title = (video: Video) => video.title ?? video.id;
  return [
    {
      heading: "Select",
      hidden: true,
      cell: (video) => (
        <input
          type="checkbox"
          aria-label={title(video)}
          checked={selected.has(video.id)}
          onChange={(event) => onToggle(video.id, event.currentTarget.checked)}
        />
      ),
    },
    {
      heading: "Thumbnail",
      class: "thumb",
      cell: (video) =>
        video.status === "ready" && video.visibility !== "private" ? (
          <img src={video.thumbnail.url} alt="" width={96} height={54} loading="lazy" />
        ) : (
          <span class="placeholder" aria-hidden="true" />
        ),
    },
    { heading: "Title", cell: (video) => <a href={paths.video(projectId, video.id)}>{title(video)}</a> },
    { heading: "Status", cell: (video) => <span class={`status status-${video.status}`}>{video.status}</span> },
    { heading: "Duration", cell: (video) => formatDuration(video.duration) },
    { heading: "Visibility", cell: (video) => video.visibility },
    {
      heading: "Created",
      cell: (video) => <time dateTime={video.createdAt}>{formatTime(video.createdAt)}</time>,
    },
  ];
}

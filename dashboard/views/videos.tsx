import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, must, type Video, type VideoStatus, type Visibility } from "../api";
import { Problem } from "../components";
import { messageOf } from "../errors";
import { formatDuration, formatTime } from "../format";
import { useMode } from "../mode";
import { type BulkOutcome, PageCursor, POLL_MS, STATUSES, summarize } from "../video-list";
import { BulkBar } from "./bulk";
import { ImportFromUrl } from "./import";
import { Uploads } from "./uploads";

const PAGE_SIZE = 20;

/**
 * The project's videos (contract section 18): newest first, paged, filtered by status; the list is
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
      <ImportFromUrl projectId={props.projectId} mode={mode} onImported={load} />
      <div class="toolbar">
        <label>
          Status{" "}
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.currentTarget.value as VideoStatus | "");
              setPages(new PageCursor());
            }}
          >
            <option value="">All statuses</option>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        {/* Applied on Enter or when the field is left (change), not on every key. */}
        <label>
          Search{" "}
          <input
            type="search"
            placeholder="Title words"
            value={search}
            onChange={(event) => {
              setSearch(event.currentTarget.value);
              setPages(new PageCursor());
            }}
          />
        </label>
        <label>
          Tag{" "}
          <input
            type="search"
            value={tag}
            onChange={(event) => {
              setTag(event.currentTarget.value);
              setPages(new PageCursor());
            }}
          />
        </label>
      </div>
      <BulkBar count={selected.size} onAction={runBulk} outcome={outcome} />
      <Problem message={error} />
      {videos === null ? (
        <p>Loading…</p>
      ) : videos.length === 0 ? (
        <p>
          {status || search.trim() || tag.trim()
            ? "No videos match these filters."
            : "No videos yet. Upload one above."}
        </p>
      ) : (
        <table class="videos">
          <caption class="visually-hidden">Videos, newest first</caption>
          <thead>
            <tr>
              <th scope="col">
                <span class="visually-hidden">Select</span>
              </th>
              <th scope="col">Thumbnail</th>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Visibility</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {videos.map((video) => (
              <VideoRow
                key={video.id}
                video={video}
                projectId={props.projectId}
                checked={selected.has(video.id)}
                onToggle={toggle}
              />
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={!pages.canGoBack} onClick={() => setPages(pages.back())}>
          Previous page
        </button>
        <button type="button" disabled={!nextCursor} onClick={() => nextCursor && setPages(pages.forward(nextCursor))}>
          Next page
        </button>
      </div>
    </>
  );
}

function VideoRow(props: {
  video: Video;
  projectId: string;
  checked: boolean;
  onToggle: (id: string, on: boolean) => void;
}) {
  const { video } = props;
  const title = video.title ?? video.id;
  return (
    <tr>
      <td>
        <input
          type="checkbox"
          aria-label={title}
          checked={props.checked}
          onChange={(event) => props.onToggle(video.id, event.currentTarget.checked)}
        />
      </td>
      <td class="thumb" data-label="Thumbnail">
        {video.status === "ready" && video.visibility !== "private" ? (
          <img src={video.thumbnail.url} alt="" width={96} height={54} loading="lazy" />
        ) : (
          <span class="placeholder" aria-hidden="true" />
        )}
      </td>
      <td data-label="Title">
        <a href={`/dashboard/projects/${props.projectId}/videos/${video.id}`}>{title}</a>
      </td>
      <td data-label="Status">
        <span class={`status status-${video.status}`}>{video.status}</span>
      </td>
      <td data-label="Duration">{formatDuration(video.duration)}</td>
      <td data-label="Visibility">{video.visibility}</td>
      <td data-label="Created">
        <time dateTime={video.createdAt}>{formatTime(video.createdAt)}</time>
      </td>
    </tr>
  );
}

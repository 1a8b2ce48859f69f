import { useEffect, useState } from "preact/hooks";
import { type Analytics, barsOf, labelledIndexes, windowOf } from "../analytics";
import { ApiFailure, api, must } from "../api";
import { Problem } from "../components";
import { messageOf } from "../errors";
import { formatCount, formatMs, formatPercent, formatWatchTime } from "../format";
import { Table } from "../lists";
import { useMode } from "../mode";
import { paths } from "../route";

type Loaded =
  | { state: "loading" }
  | { state: "none" }
  | { state: "error"; message: string }
  | { state: "ok"; data: Analytics };

/**
 * The figures `read` answers, read once for each `key` (what the figures are of: video, project,
 * mode). The window (`windowOf`, the last 7 days) is taken when they are read, inside `read`: were it
 * part of the key, every render would name a new window and read them again, which is what the
 * views did, about 50 times a second.
 */
function useAnalytics(read: () => Promise<Analytics>, key: string): Loaded {
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  useEffect(() => {
    read()
      .then((data) => setLoaded({ state: "ok", data }))
      .catch((failure: unknown) =>
        setLoaded(
          failure instanceof ApiFailure && failure.status === 404
            ? { state: "none" }
            : { state: "error", message: messageOf(failure) },
        ),
      );
  }, [key]);
  return loaded;
}

/** A video's figures, on its page. */
export function VideoAnalytics(props: { videoId: string; projectId: string }) {
  const mode = useMode();
  const loaded = useAnalytics(
    () =>
      must(
        api.GET("/v1/videos/{id}/analytics", {
          params: { path: { id: props.videoId }, query: { projectId: props.projectId, mode, ...windowOf(new Date()) } },
        }),
      ),
    `${props.videoId} ${props.projectId} ${mode}`,
  );
  return (
    <section class="card">
      <h2>Analytics</h2>
      <Figures loaded={loaded} />
    </section>
  );
}

/** The project's figures and its top videos. */
export function AnalyticsView(props: { projectId: string }) {
  const mode = useMode();
  const loaded = useAnalytics(
    () =>
      must(
        api.GET("/v1/analytics", { params: { query: { projectId: props.projectId, mode, ...windowOf(new Date()) } } }),
      ),
    `${props.projectId} ${mode}`,
  );
  return (
    <>
      <h1>Analytics</h1>
      <p class="hint">The last 7 days, by day (UTC).</p>
      <Figures loaded={loaded} />
      {loaded.state === "ok" && loaded.data.topVideos && loaded.data.topVideos.length > 0 && (
        <section class="card">
          <h2>Top videos</h2>
          <Table
            class="simple"
            cellLabels={false}
            rows={loaded.data.topVideos}
            rowKey={(video) => video.videoId}
            columns={[
              {
                heading: "Video",
                cell: (video) => (
                  <a href={paths.video(props.projectId, video.videoId)}>{video.title ?? video.videoId}</a>
                ),
              },
              { heading: "Views", cell: (video) => formatCount(video.views) },
              { heading: "Watch time", cell: (video) => formatWatchTime(video.watchTimeSeconds) },
            ]}
          />
        </section>
      )}
    </>
  );
}

function Figures(props: { loaded: Loaded }) {
  const { loaded } = props;
  if (loaded.state === "loading") return <p>Loading…</p>;
  if (loaded.state === "error") return <Problem message={loaded.message} />;
  if (loaded.state === "none") return <p>No analytics yet.</p>;
  const { data } = loaded;
  return (
    <>
      <dl class="figures">
        <div>
          <dt>Views</dt>
          <dd>{formatCount(data.views)}</dd>
        </div>
        <div>
          <dt>Watch time</dt>
          <dd>{formatWatchTime(data.watchTimeSeconds)}</dd>
        </div>
        <div>
          <dt>Startup time p50 / p95</dt>
          <dd>
            {data.startupTimeMs ? `${formatMs(data.startupTimeMs.p50)} / ${formatMs(data.startupTimeMs.p95)}` : "–"}
          </dd>
        </div>
        <div>
          <dt>Rebuffering</dt>
          <dd>{formatPercent(data.rebufferRatio)} of watch time</dd>
        </div>
        <div>
          <dt>Views with an error</dt>
          <dd>{formatCount(data.errorViews)}</dd>
        </div>
      </dl>
      <BarChart
        title="Views"
        points={data.series.map((point) => ({ start: point.start, value: point.views }))}
        format={formatCount}
      />
      <BarChart
        title="Watch time"
        points={data.series.map((point) => ({ start: point.start, value: point.watchTimeSeconds }))}
        format={formatWatchTime}
      />
      {data.renditions.length > 0 && (
        <p>
          Watch time by rendition:{" "}
          {data.renditions.map((entry) => `${entry.resolution} ${formatPercent(entry.share)}`).join(", ")}
        </p>
      )}
    </>
  );
}

const WIDTH = 600;
const HEIGHT = 160;
const LABELS = 36;

/** A bar chart as inline SVG, each value written above its bar: readable without hovering. */
function BarChart(props: { title: string; points: { start: string; value: number }[]; format: (n: number) => string }) {
  if (props.points.length === 0) return null;
  const { bars, max } = barsOf(props.points, WIDTH, HEIGHT - LABELS);
  const labelled = labelledIndexes(bars.length, WIDTH);
  const top = HEIGHT - LABELS;
  return (
    <figure class="chart">
      <figcaption>
        {props.title} (scale up to {props.format(max)})
      </figcaption>
      <svg viewBox={`0 -16 ${WIDTH} ${HEIGHT + 16}`} role="img" aria-label={`${props.title} over time`}>
        <line x1={0} y1={top} x2={WIDTH} y2={top} class="axis" />
        {bars.map((bar, index) => (
          <g key={bar.label + index}>
            <rect x={bar.x} y={bar.y} width={bar.width} height={bar.height} class="bar" />
            {labelled.has(index) && (
              <>
                <text x={bar.x + bar.width / 2} y={bar.y - 4} class="value">
                  {props.format(bar.value)}
                </text>
                <text x={bar.x + bar.width / 2} y={top + 16} class="label">
                  {bar.label}
                </text>
              </>
            )}
          </g>
        ))}
      </svg>
    </figure>
  );
}

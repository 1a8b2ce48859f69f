import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Delivery, must, type WebhookEndpoint } from "../api";
import { Problem } from "../components";
import { messageOf } from "../errors";
import { formatMs, formatTime } from "../format";
import { useMode } from "../mode";
import { paths } from "../route";
import { PageCursor } from "../video-list";
import { EVENT_TYPES } from "./webhooks";

type State = Delivery["state"];

/** An endpoint's delivery attempts (contract section 10): filters by state and event type, `Next page`, `Retry`. */
export function DeliveriesView(props: { projectId: string; endpointId: string }) {
  const mode = useMode();
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null);
  const [state, setState] = useState<State | "">("");
  const [eventType, setEventType] = useState("");
  const [pages, setPages] = useState(() => new PageCursor());
  const [attempts, setAttempts] = useState<Delivery[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const path = { projectId: props.projectId, id: props.endpointId };

  useEffect(() => {
    must(api.GET("/v1/projects/{projectId}/webhook-endpoints/{id}", { params: { path, query: { mode } } }))
      .then(setEndpoint)
      .catch((failure: unknown) => setError(messageOf(failure)));
  }, [props.projectId, props.endpointId, mode]);

  const load = useCallback(async () => {
    try {
      const query = {
        mode,
        limit: 20,
        ...(state ? { state } : {}),
        ...(eventType ? { eventType } : {}),
        ...(pages.current ? { cursor: pages.current } : {}),
      };
      const page = await must(
        api.GET("/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries", { params: { path, query } }),
      );
      setAttempts(page.data);
      setNext(page.nextCursor);
      setError(null);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, [props.projectId, props.endpointId, mode, state, eventType, pages]);
  useEffect(() => {
    void load();
  }, [load]);

  const retry = async (attempt: Delivery) => {
    setNotice(null);
    try {
      await must(
        api.POST("/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry", {
          params: { path: { ...path, attemptId: attempt.id }, query: { mode } },
        }),
      );
      setNotice(`A new attempt of ${attempt.eventType} was queued.`);
      setPages(new PageCursor());
      await load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <>
      <p>
        <a href={paths.webhooks(props.projectId)}>Back to webhooks</a>
      </p>
      <h1>Deliveries</h1>
      {endpoint && <p class="url">{endpoint.url}</p>}
      <div class="toolbar">
        <label>
          State{" "}
          <select
            value={state}
            onChange={(event) => {
              setState(event.currentTarget.value as State | "");
              setPages(new PageCursor());
            }}
          >
            <option value="">All states</option>
            <option value="pending">pending</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <label>
          Event type{" "}
          <select
            value={eventType}
            onChange={(event) => {
              setEventType(event.currentTarget.value);
              setPages(new PageCursor());
            }}
          >
            <option value="">All event types</option>
            {EVENT_TYPES.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <Problem message={error} />
      {notice && <p role="status">{notice}</p>}
      {attempts === null ? (
        <p>Loading…</p>
      ) : attempts.length === 0 ? (
        <p>No deliveries{state || eventType ? " match these filters" : " yet"}.</p>
      ) : (
        <table class="simple deliveries">
          <thead>
            <tr>
              <th scope="col">Event type</th>
              <th scope="col">State</th>
              <th scope="col">Attempt</th>
              <th scope="col">Response status</th>
              <th scope="col">Duration</th>
              <th scope="col">Time</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((attempt) => (
              <tr key={attempt.id}>
                <td data-label="Event type">{attempt.eventType}</td>
                <td data-label="State">
                  {attempt.state}
                  {attempt.error && ` (${attempt.error})`}
                </td>
                <td data-label="Attempt">{attempt.attempt}</td>
                <td data-label="Response status">{attempt.responseStatus ?? "–"}</td>
                <td data-label="Duration">{formatMs(attempt.durationMs)}</td>
                <td data-label="Time">{formatTime(attempt.createdAt)}</td>
                <td>
                  {attempt.state === "failed" && (
                    <button type="button" onClick={() => retry(attempt)}>
                      Retry
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={!pages.canGoBack} onClick={() => setPages(pages.back())}>
          Previous page
        </button>
        <button type="button" disabled={!next} onClick={() => next && setPages(pages.forward(next))}>
          Next page
        </button>
      </div>
    </>
  );
}

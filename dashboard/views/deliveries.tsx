import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Delivery, must, type WebhookEndpoint } from "../api";
import { Problem, SelectField } from "../components";
import { DELIVERY_STATES, type DeliveryState, EVENT_TYPES, type EventType } from "../enums";
import { messageOf } from "../errors";
import { formatMs, formatTime } from "../format";
import { Pager, Table } from "../lists";
import { useMode } from "../mode";
import { paths } from "../route";
import { PageCursor } from "../video-list";

/** An endpoint's delivery attempts (docs/webhooks.md): filters by state and event type, `Next page`, `Retry`. */
export function DeliveriesView(props: { projectId: string; endpointId: string }) {
  const mode = useMode();
  const [endpoint, setEndpoint] = useState<WebhookEndpoint | null>(null);
  const [state, setState] = useState<DeliveryState | "">("");
  const [eventType, setEventType] = useState<EventType | "">("");
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
        <SelectField
          inline
          label="State"
          value={state}
          options={[["", "All states"], ...DELIVERY_STATES]}
          onChange={(value) => {
            setState(value);
            setPages(new PageCursor());
          }}
        />
        <SelectField
          inline
          label="Event type"
          value={eventType}
          options={[["", "All event types"], ...EVENT_TYPES]}
          onChange={(value) => {
            setEventType(value);
            setPages(new PageCursor());
          }}
        />
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <Problem message={error} />
      {notice && <p role="status">{notice}</p>}
      <Table
        class="simple deliveries"
        rows={attempts}
        rowKey={(attempt) => attempt.id}
        empty={<p>No deliveries{state || eventType ? " match these filters" : " yet"}.</p>}
        columns={[
          { heading: "Event type", cell: (attempt) => attempt.eventType },
          {
            heading: "State",
            cell: (attempt) => (
              <>
                {attempt.state}
                {attempt.error && ` (${attempt.error})`}
              </>
            ),
          },
          { heading: "Attempt", cell: (attempt) => attempt.attempt },
          { heading: "Response status", cell: (attempt) => attempt.responseStatus ?? "–" },
          { heading: "Duration", cell: (attempt) => formatMs(attempt.durationMs) },
          { heading: "Time", cell: (attempt) => formatTime(attempt.createdAt) },
          {
            heading: "Actions",
            hidden: true,
            cell: (attempt) =>
              attempt.state === "failed" && (
                <button type="button" onClick={() => retry(attempt)}>
                  Retry
                </button>
              ),
          },
        ]}
      />
      <Pager pages={pages} next={next} onChange={setPages} />
    </>
  );
}

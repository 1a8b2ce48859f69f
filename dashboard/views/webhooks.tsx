import { useCallback, useEffect, useState } from "preact/hooks";
import { api, must, type WebhookEndpoint } from "../api";
import { ConfirmDialog, CopyField, Field, Problem } from "../components";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { type Mode, useMode } from "../mode";
import { paths } from "../route";

type EventType = WebhookEndpoint["eventTypes"][number];

/** Every event type the API sends, in the order the checkboxes show them: a type the API adds fails the type check here until it is listed. */
const EVENT_ORDER: Record<EventType, number> = {
  "video.playable": 0,
  "video.ready": 1,
  "video.errored": 2,
  "video.deleted": 3,
  "video.captions.ready": 4,
  "video.captions.errored": 5,
};
export const EVENT_TYPES = (Object.keys(EVENT_ORDER) as EventType[]).sort((a, b) => EVENT_ORDER[a] - EVENT_ORDER[b]);

/** `Webhooks` (contract section 10): the endpoints, `Add endpoint` with its secret shown once, and per endpoint its actions. */
export function WebhooksView(props: { projectId: string }) {
  const mode = useMode();
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [adding, setAdding] = useState(false);
  const params = { path: { projectId: props.projectId }, query: { mode } };

  const load = useCallback(async () => {
    try {
      setEndpoints((await must(api.GET("/v1/projects/{projectId}/webhook-endpoints", { params }))).data);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, [props.projectId, mode]);
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <>
      <h1>Webhooks</h1>
      <Problem message={error} />
      {secret && (
        <div class="card notice">
          <h2>Signing secret for {secret.url}</h2>
          <CopyField
            label="Signing secret"
            value={secret.secret}
            note="Copy it now: it is shown this once. Deliveries are signed with it (Standard Webhooks)."
          />
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      {endpoints === null ? (
        <p>Loading…</p>
      ) : endpoints.length === 0 ? (
        <p>No endpoints yet.</p>
      ) : (
        <ul class="endpoints">
          {endpoints.map((endpoint) => (
            <EndpointItem
              key={endpoint.id}
              endpoint={endpoint}
              projectId={props.projectId}
              mode={mode}
              onChanged={load}
              onSecret={(value) => setSecret({ url: endpoint.url, secret: value })}
              onError={setError}
            />
          ))}
        </ul>
      )}
      {adding ? (
        <AddEndpoint
          projectId={props.projectId}
          mode={mode}
          onCancel={() => setAdding(false)}
          onCreated={(created) => {
            setSecret(created);
            setAdding(false);
            void load();
          }}
        />
      ) : (
        <button type="button" class="primary" onClick={() => setAdding(true)}>
          Add endpoint
        </button>
      )}
    </>
  );
}

function EndpointItem(props: {
  endpoint: WebhookEndpoint;
  projectId: string;
  mode: Mode;
  onChanged: () => void;
  onSecret: (secret: string) => void;
  onError: (message: string | null) => void;
}) {
  const { endpoint } = props;
  const [deleting, setDeleting] = useState(false);
  const params = { path: { projectId: props.projectId, id: endpoint.id }, query: { mode: props.mode } };
  const act = async (work: () => Promise<unknown>) => {
    props.onError(null);
    try {
      await work();
      props.onChanged();
    } catch (failure) {
      props.onError(messageOf(failure));
    }
  };
  const rotate = () =>
    act(async () => {
      const rotated = await must(api.POST("/v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret", { params }));
      props.onSecret(rotated.secret);
    });
  const setEnabled = (enabled: boolean) =>
    act(() => must(api.PATCH("/v1/projects/{projectId}/webhook-endpoints/{id}", { params, body: { enabled } })));
  const remove = () => act(() => must(api.DELETE("/v1/projects/{projectId}/webhook-endpoints/{id}", { params })));
  return (
    <li class="card endpoint">
      <h2 class="url">{endpoint.url}</h2>
      <p>
        <span class={endpoint.enabled ? "badge ok" : "badge off"}>{endpoint.enabled ? "enabled" : "disabled"}</span>
        {endpoint.disabledReason === "gone" && " (it answered 410 Gone)"} Events: {endpoint.eventTypes.join(", ")}
      </p>
      <div class="actions">
        <a href={paths.deliveries(props.projectId, endpoint.id)}>Deliveries</a>
        <button type="button" onClick={rotate}>
          Rotate secret
        </button>
        {endpoint.enabled ? (
          <button type="button" onClick={() => setEnabled(false)}>
            Disable
          </button>
        ) : (
          <button type="button" onClick={() => setEnabled(true)}>
            Enable
          </button>
        )}
        <button type="button" class="danger" onClick={() => setDeleting(true)}>
          Delete
        </button>
      </div>
      <ConfirmDialog
        open={deleting}
        title="Delete this endpoint?"
        confirm="Delete"
        onConfirm={() => {
          setDeleting(false);
          void remove();
        }}
        onCancel={() => setDeleting(false)}
      >
        <p>{endpoint.url} gets no more deliveries.</p>
      </ConfirmDialog>
    </li>
  );
}

function AddEndpoint(props: {
  projectId: string;
  mode: Mode;
  onCancel: () => void;
  onCreated: (created: { url: string; secret: string }) => void;
}) {
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState<Set<EventType>>(new Set(EVENT_TYPES));
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const create = async (event: Event) => {
    event.preventDefault();
    setProblems(NO_PROBLEMS);
    try {
      const eventTypes = EVENT_TYPES.filter((type) => types.has(type));
      const created = await must(
        api.POST("/v1/projects/{projectId}/webhook-endpoints", {
          params: { path: { projectId: props.projectId }, query: { mode: props.mode } },
          body: { url, eventTypes },
        }),
      );
      props.onCreated({ url: created.url, secret: created.secret });
    } catch (failure) {
      setProblems(problemsOf(failure, ["url", "eventTypes", "description"]));
    }
  };
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(types);
    if (on) next.add(type);
    else next.delete(type);
    setTypes(next);
  };
  return (
    <form class="card" noValidate onSubmit={create}>
      <h2>Add endpoint</h2>
      <Field
        label="Endpoint URL"
        name="url"
        type="url"
        placeholder="https://example.com/webhooks"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        error={problems.fields.url}
      />
      <fieldset>
        <legend>Event types</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} class="inline">
            <input
              type="checkbox"
              checked={types.has(type)}
              onChange={(event) => toggle(type, event.currentTarget.checked)}
            />
            {type}
          </label>
        ))}
        {problems.fields.eventTypes && <span class="error">{problems.fields.eventTypes}</span>}
      </fieldset>
      <Problem message={problems.form} />
      <div class="actions">
        <button type="submit" class="primary">
          Create endpoint
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

import { useCallback, useEffect, useState } from "preact/hooks";
import { api, must, type WebhookEndpoint } from "../api";
import { CheckboxGroup, ConfirmDialog, CopyField, CreationForm, Field, Problem } from "../components";
import { EVENT_TYPES, type EventType, type Mode } from "../enums";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { Listed } from "../lists";
import { useMode } from "../mode";
import { paths } from "../route";

/**
 * `Webhooks` (docs/webhooks.md): the endpoints, `Add endpoint` with its secret shown once, and per
 * endpoint its actions.
 */
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
      <Listed items={endpoints} empty={<p>No endpoints yet.</p>}>
        {(endpoints) => (
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
      </Listed>
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
  const [eventTypes, setEventTypes] = useState<readonly EventType[]>(EVENT_TYPES);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const create = async () => {
    setProblems(NO_PROBLEMS);
    try {
      const created = await must(
        api.POST("/v1/projects/{projectId}/webhook-endpoints", {
          params: { path: { projectId: props.projectId }, query: { mode: props.mode } },
          body: { url, eventTypes: [...eventTypes] },
        }),
      );
      props.onCreated({ url: created.url, secret: created.secret });
    } catch (failure) {
      setProblems(problemsOf(failure, ["url", "eventTypes", "description"]));
    }
  };
  return (
    <CreationForm
      heading="Add endpoint"
      submit="Create endpoint"
      problem={problems.form}
      onSubmit={create}
      onCancel={props.onCancel}
    >
      <Field
        label="Endpoint URL"
        name="url"
        type="url"
        placeholder="https://example.com/webhooks"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        error={problems.fields.url}
      />
      <CheckboxGroup
        legend="Event types"
        values={EVENT_TYPES}
        checked={eventTypes}
        onChange={setEventTypes}
        error={problems.fields.eventTypes}
      />
    </CreationForm>
  );
}

import { useCallback, useEffect, useState } from "preact/hooks";
import { type ApiKey, api, must } from "../api";
import { CheckboxGroup, ConfirmDialog, CopyField, CreationForm, Field, Problem } from "../components";
import { KEY_SCOPES, type KeyScope, MODES, type Mode } from "../enums";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { formatTime } from "../format";
import { Table } from "../lists";
import { useMode } from "../mode";

/**
 * `API keys` (docs/api-rules.md#projects-and-api-keys): the list, `Create API key` with the new key
 * shown once, `Revoke`.
 */
export function KeysView(props: { projectId: string }) {
  const mode = useMode();
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<readonly KeyScope[]>(KEY_SCOPES);
  const [keyMode, setKeyMode] = useState<Mode>(mode);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const path = { projectId: props.projectId };

  const load = useCallback(async () => {
    try {
      setKeys((await must(api.GET("/v1/projects/{projectId}/api-keys", { params: { path } }))).data);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, [props.projectId]);
  useEffect(() => {
    void load();
  }, [load]);

  const create = async () => {
    setProblems(NO_PROBLEMS);
    try {
      const body = { name, scopes: [...scopes], mode: keyMode };
      const key = await must(api.POST("/v1/projects/{projectId}/api-keys", { params: { path }, body }));
      // Shown this once: the dashboard keeps no copy.
      setCreated({ name: key.name, key: key.key });
      setCreating(false);
      setName("");
      await load();
    } catch (failure) {
      setProblems(problemsOf(failure, ["name", "scopes", "mode"]));
    }
  };
  const revoke = async (key: ApiKey) => {
    setRevoking(null);
    try {
      await must(
        api.DELETE("/v1/projects/{projectId}/api-keys/{keyId}", { params: { path: { ...path, keyId: key.id } } }),
      );
      await load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <>
      <h1>API keys</h1>
      <Problem message={error} />
      {created && (
        <div class="card notice">
          <h2>New key: {created.name}</h2>
          <CopyField
            label="API key"
            value={created.key}
            note="Copy it now: it is shown this once, and the dashboard does not keep it."
          />
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <Table
        class="simple"
        rows={keys}
        rowKey={(key) => key.id}
        empty={<p>No API keys yet.</p>}
        columns={[
          { heading: "Name", cell: (key) => key.name },
          { heading: "Scopes", cell: (key) => key.scopes.join(", ") },
          { heading: "Mode", cell: (key) => key.mode },
          { heading: "Created", cell: (key) => formatTime(key.createdAt) },
          { heading: "Last used", cell: (key) => (key.lastUsedAt ? formatTime(key.lastUsedAt) : "never") },
          {
            heading: "Actions",
            hidden: true,
            cell: (key) => (
              <button type="button" class="danger" onClick={() => setRevoking(key)}>
                Revoke
              </button>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the key ${revoking?.name ?? ""}?`}
        confirm="Revoke"
        onConfirm={() => revoking && revoke(revoking)}
        onCancel={() => setRevoking(null)}
      >
        <p>Requests with it are refused from now on.</p>
      </ConfirmDialog>
      {creating ? (
        <CreationForm
          heading="Create API key"
          submit="Create key"
          problem={problems.form}
          onSubmit={create}
          onCancel={() => setCreating(false)}
        >
          <Field
            label="Key name"
            name="name"
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            error={problems.fields.name}
          />
          <CheckboxGroup
            legend="Scopes"
            values={KEY_SCOPES}
            checked={scopes}
            onChange={setScopes}
            error={problems.fields.scopes}
          />
          <fieldset>
            <legend>Mode</legend>
            {MODES.map((value) => (
              <label key={value} class="inline">
                <input
                  type="radio"
                  name="key-mode"
                  value={value}
                  checked={keyMode === value}
                  onChange={() => setKeyMode(value)}
                />
                {value === "live" ? "Live" : "Test"}
              </label>
            ))}
          </fieldset>
        </CreationForm>
      ) : (
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          Create API key
        </button>
      )}
    </>
  );
}

import { useCallback, useEffect, useState } from "preact/hooks";
import { type ApiKey, api, must } from "../api";
import { ConfirmDialog, CopyField, Field, Problem } from "../components";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { formatTime } from "../format";
import { useMode } from "../mode";

type Scope = "read" | "write";

/** `API keys` (contract section 4): the list, `Create API key` with the new key shown once, `Revoke`. */
export function KeysView(props: { projectId: string }) {
  const mode = useMode();
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(["read", "write"]));
  const [keyMode, setKeyMode] = useState<"live" | "test">(mode);
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

  const create = async (event: Event) => {
    event.preventDefault();
    setProblems(NO_PROBLEMS);
    try {
      const body = { name, scopes: (["read", "write"] as const).filter((s) => scopes.has(s)), mode: keyMode };
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
  const toggleScope = (scope: Scope, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
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
      {keys === null ? (
        <p>Loading…</p>
      ) : keys.length === 0 ? (
        <p>No API keys yet.</p>
      ) : (
        <table class="simple">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Mode</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td data-label="Name">{key.name}</td>
                <td data-label="Scopes">{key.scopes.join(", ")}</td>
                <td data-label="Mode">{key.mode}</td>
                <td data-label="Created">{formatTime(key.createdAt)}</td>
                <td data-label="Last used">{key.lastUsedAt ? formatTime(key.lastUsedAt) : "never"}</td>
                <td>
                  <button type="button" class="danger" onClick={() => setRevoking(key)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
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
        <form class="card" noValidate onSubmit={create}>
          <h2>Create API key</h2>
          <Field
            label="Key name"
            name="name"
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            error={problems.fields.name}
          />
          <fieldset>
            <legend>Scopes</legend>
            {(["read", "write"] as const).map((scope) => (
              <label key={scope} class="inline">
                <input
                  type="checkbox"
                  checked={scopes.has(scope)}
                  onChange={(event) => toggleScope(scope, event.currentTarget.checked)}
                />
                {scope}
              </label>
            ))}
            {problems.fields.scopes && <span class="error">{problems.fields.scopes}</span>}
          </fieldset>
          <fieldset>
            <legend>Mode</legend>
            {(["live", "test"] as const).map((value) => (
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
          <Problem message={problems.form} />
          <div class="actions">
            <button type="submit" class="primary">
              Create key
            </button>
            <button type="button" onClick={() => setCreating(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          Create API key
        </button>
      )}
    </>
  );
}

import { useState } from "preact/hooks";
import { type Account, api, must } from "../api";
import { Field, Form, Problem } from "../components";
import { type FormProblems, NO_PROBLEMS, problemsOf } from "../errors";
import { formatTime } from "../format";

/** The signed-in account, and its password change (`POST /v1/account/password`). */
export function AccountView(props: { account: Account }) {
  const { account } = props;
  const [currentPassword, setCurrentPassword] = useState("");
  const [newPassword, setNewPassword] = useState("");
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const change = async () => {
    setBusy(true);
    setProblems(NO_PROBLEMS);
    setDone(false);
    try {
      await must(api.POST("/v1/account/password", { body: { currentPassword, newPassword } }));
      setCurrentPassword("");
      setNewPassword("");
      setDone(true);
    } catch (error) {
      // What was typed stays in the fields, beside the API's words.
      setProblems(problemsOf(error, ["currentPassword", "newPassword"]));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="narrow">
      <h1>Account</h1>
      <dl class="details">
        <dt>Email</dt>
        <dd>{account.email}</dd>
        <dt>Plan</dt>
        <dd>{account.plan}</dd>
        <dt>Created</dt>
        <dd>{formatTime(account.createdAt)}</dd>
      </dl>
      <h2>Password</h2>
      {account.approved ? (
        <Form onSubmit={change}>
          <Field
            label="Current password"
            type="password"
            name="currentPassword"
            autoComplete="current-password"
            required
            value={currentPassword}
            onInput={(event) => setCurrentPassword(event.currentTarget.value)}
            error={problems.fields.currentPassword}
          />
          <Field
            label="New password"
            type="password"
            name="newPassword"
            autoComplete="new-password"
            required
            hint="At least 10 characters. Every other session of this account is logged out."
            value={newPassword}
            onInput={(event) => setNewPassword(event.currentTarget.value)}
            error={problems.fields.newPassword}
          />
          <Problem message={problems.form} />
          {done && (
            <p role="status">Your password has been changed. Every other session of this account is logged out.</p>
          )}
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Change password
            </button>
          </div>
        </Form>
      ) : (
        <p>You can change your password once an operator has approved your account.</p>
      )}
    </main>
  );
}

import { useState } from "preact/hooks";
import { type Account, api, must } from "../api";
import { Field, Form, Problem } from "../components";
import { type FormProblems, NO_PROBLEMS, problemsOf } from "../errors";

/** Signed out: one form for both, `Sign up` and `Log in` (docs/dashboard.md). */
export function AuthView(props: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const act = async (action: "signup" | "login") => {
    setBusy(true);
    setProblems(NO_PROBLEMS);
    setNotice(null);
    try {
      const body = { email, password };
      if (action === "signup") {
        await must(api.POST("/v1/auth/signup", { body }));
        setNotice("Account created. It now waits for approval by an operator; log in to see when it is approved.");
      } else {
        await must(api.POST("/v1/auth/login", { body }));
        props.onSignedIn();
      }
    } catch (error) {
      // What was typed stays in the fields.
      setProblems(problemsOf(error, ["email", "password"]));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="narrow">
      <h1>Video dashboard</h1>
      <Form onSubmit={() => act("login")}>
        <Field
          label="Email"
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
          error={problems.fields.email}
        />
        <Field
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          hint="At least 10 characters."
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
          error={problems.fields.password}
        />
        <Problem message={problems.form} />
        {notice && <p role="status">{notice}</p>}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Log in
          </button>
          <button type="button" disabled={busy} onClick={() => void act("signup")}>
            Sign up
          </button>
        </div>
      </Form>
      <p class="hint">
        Operators: <a href="/dashboard/operator">operator view</a>. API reference: <a href="/docs">/docs</a>.
      </p>
    </main>
  );
}

/** A signed-in account an operator has not approved yet. */
export function WaitingForApproval(props: { account: Account; onCheck: () => void }) {
  return (
    <main class="narrow">
      <h1>Waiting for approval</h1>
      <p>
        Your account ({props.account.email}) is waiting for approval by an operator. Once it is approved you can create
        projects and upload videos.
      </p>
      <button type="button" onClick={props.onCheck}>
        Check again
      </button>
    </main>
  );
}

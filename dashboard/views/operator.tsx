import { useState } from "preact/hooks";
import { type Account, api, must } from "../api";
import { Field, Problem } from "../components";
import { messageOf } from "../errors";
import { formatTime } from "../format";
import { paths } from "../route";

type Plan = "free" | "pro" | "business";

/**
 * The operator view (`/dashboard/operator`): the operator token is typed into `Operator token` and
 * kept in this component's state only (no cookie, no storage: a reload forgets it). Accounts waiting
 * for approval come first; per account `Approve`, `Suspend` and its plan.
 */
export function OperatorView() {
  const [typed, setTyped] = useState("");
  const [token, setToken] = useState<string | null>(null);
  const [waiting, setWaiting] = useState<Account[]>([]);
  const [approved, setApproved] = useState<Account[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const headers = (value: string) => ({ authorization: `Bearer ${value}` });
  const load = async (value: string) => {
    setError(null);
    try {
      const [first, then] = await Promise.all(
        (["false", "true"] as const).map((flag) =>
          must(
            api.GET("/v1/admin/accounts", {
              params: { query: { approved: flag, limit: 100 } },
              headers: headers(value),
            }),
          ),
        ),
      );
      setWaiting(first?.data ?? []);
      setApproved(then?.data ?? []);
      setToken(value);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const act = async (account: Account, action: "approve" | "suspend" | Plan) => {
    if (!token) return;
    setError(null);
    try {
      const params = { path: { accountId: account.id } };
      if (action === "approve")
        await must(api.POST("/v1/admin/accounts/{accountId}/approve", { params, headers: headers(token) }));
      else if (action === "suspend")
        await must(api.POST("/v1/admin/accounts/{accountId}/suspend", { params, headers: headers(token) }));
      else
        await must(
          api.PUT("/v1/admin/accounts/{accountId}/plan", { params, headers: headers(token), body: { plan: action } }),
        );
      setNotice(
        `${account.email}: ${action === "approve" ? "approved" : action === "suspend" ? "suspended" : `plan ${action}`}.`,
      );
      await load(token);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <main>
      <p>
        <a href={paths.home()}>Dashboard</a>
      </p>
      <h1>Operator</h1>
      <form
        class="card"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void load(typed);
        }}
      >
        <Field
          label="Operator token"
          type="password"
          name="operator-token"
          autoComplete="off"
          hint="Kept in this tab's memory only: reloading the page forgets it."
          value={typed}
          onInput={(event) => setTyped(event.currentTarget.value)}
        />
        <button type="submit" class="primary">
          Show accounts
        </button>
      </form>
      <Problem message={error} />
      {notice && <p role="status">{notice}</p>}
      {token && (
        <>
          <AccountTable title="Waiting for approval" accounts={waiting} onAct={act} />
          <AccountTable title="Approved" accounts={approved} onAct={act} />
        </>
      )}
    </main>
  );
}

function AccountTable(props: {
  title: string;
  accounts: Account[];
  onAct: (account: Account, action: "approve" | "suspend" | Plan) => void;
}) {
  return (
    <section>
      <h2>{props.title}</h2>
      {props.accounts.length === 0 ? (
        <p class="hint">None.</p>
      ) : (
        <table class="simple">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Created</th>
              <th scope="col">Plan</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.accounts.map((account) => (
              <tr key={account.id}>
                <td data-label="Email">{account.email}</td>
                <td data-label="Created">{formatTime(account.createdAt)}</td>
                <td data-label="Plan">
                  <select
                    aria-label={`Plan of ${account.email}`}
                    value={account.plan}
                    onChange={(event) => props.onAct(account, event.currentTarget.value as Plan)}
                  >
                    {account.plan === "trial" && <option value="trial">trial</option>}
                    <option value="free">free</option>
                    <option value="pro">pro</option>
                    <option value="business">business</option>
                  </select>
                </td>
                <td class="actions">
                  <button type="button" disabled={account.approved} onClick={() => props.onAct(account, "approve")}>
                    Approve
                  </button>
                  <button type="button" disabled={!account.approved} onClick={() => props.onAct(account, "suspend")}>
                    Suspend
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

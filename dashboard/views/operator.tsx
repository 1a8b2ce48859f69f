import { useState } from "preact/hooks";
import { type Account, api, must } from "../api";
import { Field, Form, Problem } from "../components";
import { PLANS, type Plan } from "../enums";
import { messageOf } from "../errors";
import { formatTime } from "../format";
import { Table } from "../lists";
import { paths } from "../route";

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
      <Form class="card" onSubmit={() => load(typed)}>
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
      </Form>
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
      <Table
        class="simple"
        rows={props.accounts}
        rowKey={(account) => account.id}
        empty={<p class="hint">None.</p>}
        columns={[
          { heading: "Email", cell: (account) => account.email },
          { heading: "Created", cell: (account) => formatTime(account.createdAt) },
          {
            heading: "Plan",
            cell: (account) => (
              <select
                aria-label={`Plan of ${account.email}`}
                value={account.plan}
                // The select holds only the plans an operator sets (and `trial`, chosen already).
                onChange={(event) => props.onAct(account, event.currentTarget.value as Plan)}
              >
                {/* An account's own plan, when it is one no operator sets (a trial), is shown first. */}
                {!isPlan(account.plan) && <option value={account.plan}>{account.plan}</option>}
                {PLANS.map((plan) => (
                  <option key={plan} value={plan}>
                    {plan}
                  </option>
                ))}
              </select>
            ),
          },
          {
            heading: "Actions",
            hidden: true,
            class: "actions",
            cell: (account) => (
              <>
                <button type="button" disabled={account.approved} onClick={() => props.onAct(account, "approve")}>
                  Approve
                </button>
                <button type="button" disabled={!account.approved} onClick={() => props.onAct(account, "suspend")}>
                  Suspend
                </button>
              </>
            ),
          },
        ]}
      />
    </section>
  );
}

function isPlan(plan: Account["plan"]): plan is Plan {
  return (PLANS as readonly string[]).includes(plan);
}

import { useCallback, useEffect, useState } from "preact/hooks";
import { type Account, api, must } from "./api";
import { messageOf } from "./errors";
import { usePath } from "./nav";
import { parseRoute, paths } from "./route";
import { AccountView } from "./views/account";
import { AnalyticsView } from "./views/analytics";
import { AuthView, WaitingForApproval } from "./views/auth";
import { DeliveriesView } from "./views/deliveries";
import { KeysView } from "./views/keys";
import { OperatorView } from "./views/operator";
import { ProjectsView } from "./views/projects";
import { SettingsView } from "./views/settings";
import { ProjectShell } from "./views/shell";
import { VideoView } from "./views/video";
import { VideosView } from "./views/videos";
import { WebhooksView } from "./views/webhooks";

type Session = { state: "loading" } | { state: "signed-out" } | { state: "signed-in"; account: Account };

/** The dashboard: who is signed in, and the view the path names. */
export function App() {
  const path = usePath();
  const route = parseRoute(path);
  const [session, setSession] = useState<Session>({ state: "loading" });
  const [loadError, setLoadError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    const answer = await api.GET("/v1/account").catch(() => null);
    if (answer === null) return setLoadError("The service could not be reached. Reload to try again.");
    if (answer.response.status === 401) return setSession({ state: "signed-out" });
    if (!answer.data) return setLoadError(answer.error?.error.message ?? "Your account could not be loaded.");
    setSession({ state: "signed-in", account: answer.data });
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const logOut = async () => {
    try {
      await must(api.POST("/v1/auth/logout"));
    } catch (error) {
      setLoadError(messageOf(error));
      return;
    }
    setSession({ state: "signed-out" });
  };

  // The operator view needs no account: its token is the credential.
  if (route.view === "operator") return <OperatorView />;
  if (loadError) return <Page title="Dashboard">{loadError}</Page>;
  if (session.state === "loading") return <Page title="Dashboard">Loading…</Page>;
  if (session.state === "signed-out") return <AuthView onSignedIn={refresh} />;
  const { account } = session;
  const header = (
    <header class="top">
      <a href={paths.home()} class="brand">
        Video dashboard
      </a>
      <span class="who">{account.email}</span>
      <a href={paths.account()} aria-current={route.view === "account" ? "page" : undefined}>
        Account
      </a>
      <button type="button" onClick={logOut}>
        Log out
      </button>
    </header>
  );
  // Before the approval check: an account waiting for approval still sees what it is.
  if (route.view === "account") {
    return (
      <>
        {header}
        <AccountView account={account} />
      </>
    );
  }
  if (!account.approved) {
    return (
      <>
        {header}
        <WaitingForApproval account={account} onCheck={refresh} />
      </>
    );
  }
  const view = (() => {
    switch (route.view) {
      case "home":
        return <ProjectsView />;
      case "missing":
        return (
          <main>
            <h1>Not found</h1>
            <p>
              There is no such page. <a href={paths.home()}>Projects</a>
            </p>
          </main>
        );
      default:
        return (
          <ProjectShell projectId={route.projectId} current={route.view}>
            {route.view === "videos" && <VideosView projectId={route.projectId} />}
            {route.view === "video" && <VideoView projectId={route.projectId} videoId={route.videoId} />}
            {route.view === "keys" && <KeysView projectId={route.projectId} />}
            {route.view === "webhooks" && <WebhooksView projectId={route.projectId} />}
            {route.view === "deliveries" && (
              <DeliveriesView projectId={route.projectId} endpointId={route.endpointId} />
            )}
            {route.view === "settings" && <SettingsView projectId={route.projectId} />}
            {route.view === "analytics" && <AnalyticsView projectId={route.projectId} />}
          </ProjectShell>
        );
    }
  })();
  return (
    <>
      {header}
      {view}
    </>
  );
}

function Page(props: { title: string; children: string }) {
  return (
    <main>
      <h1>{props.title}</h1>
      <p>{props.children}</p>
    </main>
  );
}

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, must, type Project } from "../api";
import { Problem } from "../components";
import { messageOf } from "../errors";
import { setMode, useMode } from "../mode";
import { paths, type Route } from "../route";

const LINKS: [label: string, view: Route["view"], path: (projectId: string) => string][] = [
  ["Videos", "videos", paths.videos],
  ["API keys", "keys", paths.keys],
  ["Webhooks", "webhooks", paths.webhooks],
  ["Encoding settings", "settings", paths.settings],
  ["Analytics", "analytics", paths.analytics],
];

/** Every view of a project: its name, the links between its views, the `Test mode` switch and banner. */
export function ProjectShell(props: { projectId: string; current: Route["view"]; children: ComponentChildren }) {
  const [project, setProject] = useState<Project | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mode = useMode();
  useEffect(() => {
    setError(null);
    must(api.GET("/v1/projects/{projectId}", { params: { path: { projectId: props.projectId } } }))
      .then(setProject)
      .catch((failure: unknown) => setError(messageOf(failure)));
  }, [props.projectId]);

  if (error) {
    return (
      <main>
        <h1>Project</h1>
        <Problem message={error} />
        <a href={paths.home()}>Projects</a>
      </main>
    );
  }
  const current = props.current === "video" ? "videos" : props.current === "deliveries" ? "webhooks" : props.current;
  return (
    <>
      <div class="project-bar">
        <p class="project-name">
          <a href={paths.home()}>Projects</a> / <strong>{project?.name ?? "…"}</strong>
        </p>
        <nav aria-label="Project">
          <ul>
            {LINKS.map(([label, view, path]) => (
              <li key={view}>
                <a href={path(props.projectId)} aria-current={view === current ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            checked={mode === "test"}
            aria-checked={mode === "test"}
            onChange={(event) => setMode(event.currentTarget.checked ? "test" : "live")}
          />
          Test mode
        </label>
      </div>
      {mode === "test" && (
        <p class="banner" role="status">
          Test mode: the lists show test objects only, and everything you create is a test object (test videos keep
          their first 10 seconds and are deleted after 24 hours).
        </p>
      )}
      <main key={`${mode}`}>{props.children}</main>
    </>
  );
}

import { useEffect, useState } from "preact/hooks";
import { api, must, type Project } from "../api";
import { CreationForm, Field, Problem } from "../components";
import { type FormProblems, messageOf, NO_PROBLEMS, problemsOf } from "../errors";
import { navigate } from "../nav";
import { paths } from "../route";

/** The account's projects, as links by name, and `New project`. */
export function ProjectsView() {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);

  useEffect(() => {
    must(api.GET("/v1/projects"))
      .then((list) => setProjects(list.data))
      .catch((error: unknown) => setLoadError(messageOf(error)));
  }, []);

  const create = async () => {
    setProblems(NO_PROBLEMS);
    try {
      const project = await must(api.POST("/v1/projects", { body: { name } }));
      navigate(paths.videos(project.id));
    } catch (error) {
      const found = problemsOf(error, ["name"]);
      // invalid_name is about the one field: its message goes beside it.
      setProblems(found.form && !found.fields.name ? { form: null, fields: { name: found.form } } : found);
    }
  };

  return (
    <main>
      <h1>Projects</h1>
      {loadError && <Problem message={loadError} />}
      {projects === null && !loadError && <p>Loading…</p>}
      {projects?.length === 0 && <p>No project yet: create one to upload videos.</p>}
      {projects && projects.length > 0 && (
        <ul class="projects">
          {projects.map((project) => (
            <li key={project.id}>
              <a href={paths.videos(project.id)}>{project.name}</a> <span class="hint">{project.plan}</span>
            </li>
          ))}
        </ul>
      )}
      {creating ? (
        <CreationForm
          heading="New project"
          submit="Create project"
          problem={problems.form}
          onSubmit={create}
          onCancel={() => setCreating(false)}
        >
          <Field
            label="Project name"
            name="name"
            required
            maxLength={100}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            error={problems.fields.name}
          />
        </CreationForm>
      ) : (
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New project
        </button>
      )}
    </main>
  );
}

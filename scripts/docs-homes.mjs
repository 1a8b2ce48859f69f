// The docs check (`npm run arch`): every folder of src/ and every path the Worker serves has a home
// in docs/architecture.md, so the map a newcomer reads is the code as it is. A folder is at home
// when the map names it (`src/<folder>/`, a file directly in src/ as `src/<file>`); a path when the
// map's route table lists it, written as the API reference writes paths (`{id}`) or as the router
// does (`:id`).

/** A route's path as the map writes it: parameters in braces, a pattern's `{a|b}` kept out. */
export function mapPath(path) {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}");
}

/**
 * What has no home in `map` (the text of docs/architecture.md): the folders and files of src/
 * (`entries`: names, a folder's ending in `/`) and the paths served (`paths`, as the router has
 * them; duplicates and the middleware's catch-alls are the caller's to leave out).
 */
export function missingHomes(map, { entries, paths }) {
  const folders = entries.filter((entry) => !map.includes(`src/${entry}`));
  const routes = [...new Set(paths.map(mapPath))].filter((path) => !map.includes(`\`${path}\``));
  return { folders, routes };
}

// Folder-level import cycles (docs/conventions.md#the-import-graph-reads-top-down): the file-level
// check (dependency-cruiser's no-cycles) cannot see that videos/a.ts → playback/b.ts and
// playback/c.ts → videos/d.ts make the two folders need each other. This collapses every module of
// src/ to its top folder (a file directly in src/ stays itself) and finds the strongly connected
// groups of more than one.

/** The top folder of a module under src/, the file itself when it is directly in src/, else null. */
export function folderOf(path) {
  const nested = /^src\/([^/]+)\//.exec(path);
  if (nested) return nested[1];
  return path.startsWith("src/") ? path.slice(4) : null;
}

/**
 * Every group of folders that import each other in a circle, from dependency-cruiser's JSON
 * `modules`, each with the imports that close it (`from → to`, with a file that makes each).
 */
export function folderCycles(modules) {
  const edges = new Map();
  const witness = new Map();
  for (const mod of modules) {
    const from = folderOf(mod.source);
    if (!from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    for (const dep of mod.dependencies ?? []) {
      const to = folderOf(dep.resolved);
      if (!to || to === from) continue;
      edges.get(from).add(to);
      if (!witness.has(`${from}→${to}`)) witness.set(`${from}→${to}`, `${mod.source} → ${dep.resolved}`);
    }
  }
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return groups.map((folders) => {
    const inside = new Set(folders);
    const imports = folders.flatMap((a) =>
      [...(edges.get(a) ?? [])].filter((b) => inside.has(b)).map((b) => witness.get(`${a}→${b}`)),
    );
    return { folders, imports };
  });
}

import { useEffect, useState } from "preact/hooks";

/** Moves to another view of the dashboard without reloading the page. */
export function navigate(path: string) {
  if (location.pathname + location.search === path) return;
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current path, following links and the browser's back and forward buttons. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener("popstate", update);
    // Same-origin links to /dashboard move within the page; others (the docs, the embed page) load.
    const click = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      const link = (event.target as Element | null)?.closest?.("a");
      if (!link || link.target || link.origin !== location.origin || !link.pathname.startsWith("/dashboard")) return;
      event.preventDefault();
      navigate(link.pathname + link.search);
    };
    document.addEventListener("click", click);
    return () => {
      removeEventListener("popstate", update);
      document.removeEventListener("click", click);
    };
  }, []);
  return path;
}

import { useEffect, useState } from "preact/hooks";
import type { Mode } from "./enums";

// Test mode, one switch for the tab: when on, every list and every creation
// of the dashboard sends `mode=test`; when off, `mode=live`. Kept in the tab's session storage so a
// reload keeps it (it is no secret).

/** What a request about a video names under the session cookie: its project, and the mode to act in. */
export type Scope = { projectId: string; mode: Mode };

const KEY = "dashboard.mode";
const listeners = new Set<(mode: Mode) => void>();

function stored(): Mode {
  try {
    return sessionStorage.getItem(KEY) === "test" ? "test" : "live";
  } catch {
    return "live";
  }
}

let current: Mode = typeof sessionStorage === "undefined" ? "live" : stored();

export function currentMode(): Mode {
  return current;
}

export function setMode(mode: Mode) {
  current = mode;
  try {
    sessionStorage.setItem(KEY, mode);
  } catch {}
  for (const listener of listeners) listener(mode);
}

export function useMode(): Mode {
  const [mode, set] = useState(current);
  useEffect(() => {
    listeners.add(set);
    return () => {
      listeners.delete(set);
    };
  }, []);
  return mode;
}

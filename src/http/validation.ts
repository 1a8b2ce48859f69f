import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import type { AppEnv } from "./context";
import { ApiError, type ErrorCode, type ErrorDetail } from "./errors";

type Target = "json" | "query" | "param" | "header" | "cookie" | "form";

export function issueDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String);
    // An unknown key is named by its own path, not its parent's.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...path, key].join("."), message: "unknown field" }));
    }
    return [{ path: path.join("."), message: issue.message }];
  });
}

/**
 * Codes every route gives a field, unless it names its own: the project under cookie auth, and the
 * mode an operation acts in (docs/api-guide.md#test-mode-and-going-live).
 */
const COMMON_FIELD_CODES: Partial<Record<Target, Record<string, ErrorCode>>> = {
  query: { projectId: "invalid_project_id", mode: "invalid_query" },
};

/**
 * A validation hook that turns a failed schema check into the route's error code. `codes` names
 * the code per validated part of the request, or per field of it (by the first failing field);
 * anything not named falls back to invalid_body.
 */
export function validationHook<Input, Path extends string, Output>(
  codes: Partial<Record<Target, ErrorCode | Record<string, ErrorCode>>> = {},
): Hook<Input, AppEnv, Path, Output | undefined> {
  return (result) => {
    if (result.success) return undefined;
    const target = (result as { target?: Target }).target;
    const named = target ? codes[target] : undefined;
    const field = String(result.error.issues[0]?.path[0] ?? "");
    const code =
      (typeof named === "string" ? named : named?.[field]) ??
      (target ? COMMON_FIELD_CODES[target]?.[field] : undefined) ??
      "invalid_body";
    throw new ApiError(code, { details: issueDetails(result.error.issues) });
  };
}

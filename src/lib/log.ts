/**
 * Structured error log lines, the one way the service logs a failure. Reasons stay here and never
 * reach a client; nothing secret is passed in.
 */
export function logError(what: string, error: unknown, context: Record<string, unknown> = {}): void {
  const reason =
    error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error ?? "");
  console.error(JSON.stringify({ level: "error", what, ...context, error: reason }));
}

// The placeholders of a dashboard's SQL query (`$event`, `$thread`, `$sample`, `$metric`): the
// selection keys a query may use, found as the server's report finds them
// (crates/perfscape-server/src/report.rs `uses`: `$name` not followed by a letter, digit or `_`).

/** The selection keys a query may use as placeholders (and a panel's `select` may set). */
export const PARAM_KEYS = ['event', 'thread', 'sample', 'metric'] as const;
export type ParamKey = (typeof PARAM_KEYS)[number];

/** True when `query` uses the placeholder `$key`. */
export function usesPlaceholder(query: string, key: ParamKey): boolean {
  return new RegExp(`\\$${key}(?![A-Za-z0-9_])`).test(query);
}

/** The placeholders `query` uses, in `PARAM_KEYS` order. */
export function placeholders(query: string): ParamKey[] {
  return PARAM_KEYS.filter((k) => usesPlaceholder(query, k));
}

// The placeholders of a dashboard's SQL query (`$event`, `$thread`, `$sample`, `$metric`,
// `$run`): the selection keys a query may use, found as the server's report finds them
// (crates/perfscape-server/src/report.rs `uses`: `$name` not followed by a letter, digit or `_`).

import type { Key } from './state';

/** The selection keys a panel's `select` may set (the server's `SelectKey`). */
export const SELECT_KEYS = ['event', 'thread', 'sample', 'metric'] as const;
export type SelectKey = (typeof SELECT_KEYS)[number];

/** The placeholders a query may use, in the order of the report's answer keys (report.rs
 * `PARAMS`). */
export const PARAM_KEYS = [...SELECT_KEYS, 'run'] as const;
export type ParamKey = (typeof PARAM_KEYS)[number];

/** The state key each placeholder follows: `$run` is the run compared with run 0, the compare
 * panel's B (`cmp`). */
export const KEY_OF: Record<ParamKey, Key> = { event: 'event', thread: 'thread', sample: 'sample', metric: 'metric', run: 'cmp' };

/** True when `query` uses the placeholder `$key`. */
export function usesPlaceholder(query: string, key: ParamKey): boolean {
  return new RegExp(`\\$${key}(?![A-Za-z0-9_])`).test(query);
}

/** The placeholders `query` uses, in `PARAM_KEYS` order. */
export function placeholders(query: string): ParamKey[] {
  return PARAM_KEYS.filter((k) => usesPlaceholder(query, k));
}

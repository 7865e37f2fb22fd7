// The one page state every view reads and writes (the seeds' linked cursors), described by
// ./schema.ts and mirrored in the URL query string so that a link reproduces what one sees.

import type { Env, Field } from './fields';
import { FIELDS, KEYS, type Key, type State, defaults, misfits } from './schema';

export type { Key, Selection, State } from './schema';

/** Hears every change of the state and which keys changed. */
export type Listener = (s: State, changed: Set<Key>) => void;

/** The state read from a URL query string: every key kept in the URL that has a valid value;
 * the others (missing, or not a valid value) at their defaults. */
export function fromUrl(search: string): State {
  const q = new URLSearchParams(search);
  const s = defaults() as Record<Key, unknown>;
  for (const k of KEYS) {
    const f = FIELDS[k] as Field<unknown>;
    const text = q.get(k);
    if (!f.url || text === null) continue;
    const v = f.parse(text);
    if (v === undefined) console.warn(`perfscape: URL parameter ${k}=${text} is not valid; using the default`);
    else s[k] = v;
  }
  return s as State;
}

/** The URL query string of a state: the keys kept in the URL that differ from their defaults
 * (and the access token, if the page has one). */
export function toUrl(s: State, token: string | null = null): string {
  const q = new URLSearchParams();
  if (token) q.set('token', token);
  for (const k of KEYS) {
    const f = FIELDS[k] as Field<unknown>;
    const v = s[k];
    if (f.url && v !== f.default && v !== null) q.set(k, f.format(v));
  }
  const str = q.toString();
  return str ? `?${str}` : '';
}

/** The keys of a state shared with the other browsers of a session. */
export function sharedPart(s: State): Partial<State> {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) if (FIELDS[k].shared) out[k] = s[k];
  return out as Partial<State>;
}

/** The valid shared keys of a state received from another browser (anything else is dropped). */
export function fromShared(obj: unknown): Partial<State> {
  const out: Record<string, unknown> = {};
  if (!obj || typeof obj !== 'object') return out;
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    const f = (FIELDS as Record<string, Field<unknown>>)[k];
    if (f?.shared && f.valid(v)) out[k] = v;
  }
  return out as Partial<State>;
}

/** Keys whose change is a step the browser's Back undoes: a new history entry (the other
 * keys of the URL replace the current entry, so a zoom or a setting does not fill history). */
export const HISTORY_KEYS: readonly Key[] = ['event', 'thread', 'metric', 'kind', 'sample', 'dashboard', 'focus'];

/** The state store: one object, changed through `set`, mirrored in the URL. */
export class Store {
  private state: State;
  private listeners: Listener[] = [];
  /** True while Back/Forward restores a state (no new history entry for it). */
  private restoring = false;

  constructor(search: string) {
    this.state = fromUrl(search);
  }

  /** Follows the browser's Back and Forward: the state of the URL gone to (its keys kept in
   * the URL; the others stay as they are). */
  followHistory(): void {
    window.addEventListener('popstate', () => {
      const s = fromUrl(window.location.search);
      const patch: Record<string, unknown> = {};
      for (const k of KEYS) if (FIELDS[k].url) patch[k] = s[k];
      this.restoring = true;
      try {
        this.set(patch as Partial<State>);
      } finally {
        this.restoring = false;
      }
    });
  }

  /** The current state (do not modify it: use `set`). */
  get(): State {
    return this.state;
  }

  /** Updates the state; every listener hears which keys changed. */
  set(patch: Partial<State>): void {
    const changed = new Set<Key>();
    const next = { ...this.state } as Record<Key, unknown>;
    for (const [k, v] of Object.entries(patch) as [Key, unknown][]) {
      if (!(k in FIELDS) || v === undefined) continue;
      if (next[k] !== v) {
        next[k] = v;
        changed.add(k);
      }
    }
    if (changed.size === 0) return;
    this.state = next as State;
    if ([...changed].some((k) => FIELDS[k].url)) this.mirror(!this.restoring && HISTORY_KEYS.some((k) => changed.has(k)));
    for (const l of [...this.listeners]) l(this.state, changed);
  }

  /** Sets back to their defaults the values that do not fit the run (an unknown metric, a
   * sample past the end, a maximized panel that is not shown) and rewrites the URL without the
   * parameters that were not valid. */
  fit(env: Env): void {
    this.set(misfits(this.state, env));
    this.mirror();
  }

  /** Writes the state into the URL (keeping the access token): a new history entry with
   * `push` (when the URL changes), else in place of the current one. */
  mirror(push = false): void {
    const token = new URLSearchParams(window.location.search).get('token');
    const url = toUrl(this.state, token) || window.location.pathname;
    if (push && new URL(url, window.location.href).href !== window.location.href) window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
  }

  /** Calls `l` on every change; returns a function that stops it. */
  subscribe(l: Listener): () => void {
    this.listeners.push(l);
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }
}

/** The page's store, read from the page's URL. */
export const store = new Store(window.location.search);

/** Keys that change the profile every view reads (which sample, cumulative/delta, new samples). */
export const DATA_KEYS: Key[] = ['sample', 'mode', 'revision'];

/** True when any of `keys` changed. A view that reloads when the metric changes also reloads
 * when the data changes (another sample or mode): `'metric'` stands for both. */
export function touched(changed: Set<Key>, ...keys: Key[]): boolean {
  return keys.some((k) => changed.has(k)) || (keys.includes('metric') && DATA_KEYS.some((k) => changed.has(k)));
}

/** Keys that change the thread axis (its order or which threads it shows). */
export const AXIS_KEYS: Key[] = ['threads', 'clusters', 'subset', 'top'];

/** True when the thread axis changed: its order, its subset, or (for the value order) the event. */
export function axisChanged(s: State, changed: Set<Key>): boolean {
  return (
    AXIS_KEYS.some((k) => changed.has(k)) ||
    (s.threads === 'value' && changed.has('event')) ||
    (s.threads !== 'id' && DATA_KEYS.some((k) => changed.has(k)))
  );
}

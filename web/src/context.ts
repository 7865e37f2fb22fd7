// Data shared by the views: the run, and cached answers that several views need.

import type { EventsResponse } from './api/EventsResponse';
import type { RowsResponse } from './api/RowsResponse';
import type { RunInfo } from './api/RunInfo';
import type { SeriesResponse } from './api/SeriesResponse';
import { api } from './client';
import { threadNaming } from './format';
import type { Key, State } from './state';

/** The answer cached under `key`, asked for once; a failed answer is forgotten (asked again
 * next time). */
function cached<T>(cache: Map<string, Promise<T>>, key: string, ask: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    p = ask();
    cache.set(key, p);
    p.catch(() => {
      if (cache.get(key) === p) cache.delete(key);
    });
  }
  return p;
}

/** The loaded run and the answers several views share. */
export class Context {
  readonly run: RunInfo;
  /** The samples of a run observed over time (null without any). */
  series: SeriesResponse | null = null;
  private rowsCache = new Map<string, Promise<RowsResponse>>();
  private eventsCache = new Map<string, Promise<EventsResponse>>();

  constructor(run: RunInfo) {
    this.run = run;
    threadNaming(run);
  }

  /** Forgets cached answers (a live run got new samples). */
  invalidate(): void {
    this.rowsCache.clear();
    this.eventsCache.clear();
  }

  /** The rows of the matrix views (cached per sample/mode/metric/kind/rows/callpaths). */
  rows(s: State): Promise<RowsResponse> {
    return cached(this.rowsCache, `${s.sample}/${s.mode}/${s.metric}/${s.kind}/${s.rows}/${s.callpaths}`, () => api.rows(s));
  }

  /** The ranked events (cached per sample/mode/metric/kind/callpaths). */
  events(s: State): Promise<EventsResponse> {
    return cached(this.eventsCache, `${s.sample}/${s.mode}/${s.metric}/${s.kind}/${s.callpaths}`, () => api.events(s));
  }

  /** Row position of an event in the current row space (or of its routine's row). */
  async rowOf(s: State, event: number): Promise<number | undefined> {
    const rows = await this.rows(s);
    let i = rows.rows.findIndex((r) => r.events.includes(event));
    if (i < 0) {
      const ev = (await this.events({ ...s, callpaths: true })).rows.find((r) => r.id === event);
      if (ev?.routine !== null && ev?.routine !== undefined) i = rows.rows.findIndex((r) => r.events.includes(ev.routine as number));
    }
    return i < 0 ? undefined : i;
  }
}

/** A view: draws itself into its panel and redraws when the state changes. */
export interface View {
  /** Redraws what `changed` keys affect; resolves once drawn (or superseded). */
  update(s: State, changed: Set<Key>): void | Promise<void>;
  /** The panel changed size. */
  resize?(): void;
  /** Frees charts, listeners and pending requests. */
  dispose?(): void;
}

/** Shows an error inside a panel (a view never goes blank silently). */
export function showError(el: HTMLElement, err: unknown): void {
  console.error(err);
  el.innerHTML = '';
  const div = document.createElement('div');
  div.className = 'error';
  div.textContent = err instanceof Error ? err.message : String(err);
  el.appendChild(div);
}

/** Chart instances by panel id, exposed as `window.perfscape.charts` for tests and debugging. */
export const charts = new Map<string, unknown>();

/** Scrolls `container` (not the page) so that `el` is visible in it. */
export function revealIn(container: HTMLElement, el: HTMLElement | null): void {
  if (!el) return;
  const c = container.getBoundingClientRect();
  const r = el.getBoundingClientRect();
  const head = container.querySelector('thead')?.getBoundingClientRect().height ?? 0;
  if (r.top < c.top + head) container.scrollTop -= c.top + head - r.top + c.height / 3;
  else if (r.bottom > c.bottom) container.scrollTop += r.bottom - c.bottom + c.height / 3;
}

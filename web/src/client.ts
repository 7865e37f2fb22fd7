// Typed access to the perfscape HTTP API (types generated from the Rust structs by ts-rs).

import type { CallTreeResponse } from './api/CallTreeResponse';
import type { EventDetail } from './api/EventDetail';
import type { EventsResponse } from './api/EventsResponse';
import type { KiviatResponse } from './api/KiviatResponse';
import type { PointCloudResponse } from './api/PointCloudResponse';
import type { SeriesResponse } from './api/SeriesResponse';
import type { TrendResponse } from './api/TrendResponse';
import type { MatrixResponse } from './api/MatrixResponse';
import type { OverviewResponse } from './api/OverviewResponse';
import type { RowsResponse } from './api/RowsResponse';
import type { RunInfo } from './api/RunInfo';
import type { TimelineResponse } from './api/TimelineResponse';
import type { TerrainResponse } from './api/TerrainResponse';
import type { ThreadsResponse } from './api/ThreadsResponse';
import type { Selection } from './state';

export class ApiError extends Error {}

async function get<T>(path: string, params: Record<string, string | number | boolean | null | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const url = `/api/${path}${q.size ? `?${q}` : ''}`;
  const res = await fetch(url, { credentials: 'same-origin' });
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try {
      msg = (await res.json()).error ?? msg;
    } catch {
      /* not JSON */
    }
    throw new ApiError(`${url}: ${msg}`);
  }
  return (await res.json()) as T;
}

/** The profile a request reads: a sample of a run observed over time (none = the final state /
 * newest sample), cumulative or delta. */
export function at(s: Selection) {
  return { sample: s.sample, mode: s.mode === 'cumulative' ? null : s.mode };
}

/** Parameters every view request carries (the sample, rows and the thread axis). */
export function common(s: Selection) {
  const subset = s.subset === 'reps' && s.threads !== 'cluster' ? 'all' : s.subset;
  return {
    ...at(s),
    metric: s.metric,
    kind: s.kind,
    rows: s.rows,
    callpaths: s.callpaths,
    threads: s.threads === 'value' && s.event === null ? 'id' : s.threads,
    by_event: s.threads === 'value' ? s.event : null,
    clusters: s.threads === 'cluster' ? s.clusters : null,
    subset,
    top: subset === 'top' ? s.top : null,
  };
}

export const api = {
  run: () => get<RunInfo>('run'),
  events: (s: Selection) => get<EventsResponse>('events', { ...at(s), metric: s.metric, kind: s.kind, callpaths: s.callpaths }),
  rows: (s: Selection) => get<RowsResponse>('rows', { ...at(s), metric: s.metric, kind: s.kind, rows: s.rows, callpaths: s.callpaths }),
  matrix: (s: Selection, r: { r0: number; r1: number; t0: number; t1: number; h: number; w: number }) =>
    get<MatrixResponse>('matrix', { ...common(s), reduce: s.reduce, thread: s.thread, ...r }),
  threads: (s: Selection) => get<ThreadsResponse>('threads', common(s)),
  overview: (s: Selection, w: number) =>
    get<OverviewResponse>('overview', { ...common(s), reduce: s.reduce, skip: s.skip, bin: s.bin, strips: s.strips, w }),
  event: (s: Selection, id: number, points: number) =>
    get<EventDetail>(`event/${id}`, { ...at(s), metric: s.metric, kind: s.kind, bins: s.bins || null, points }),
  calltree: (s: Selection) =>
    get<CallTreeResponse>('calltree', { ...at(s), metric: s.metric, scope: s.scope === 'thread' ? s.thread ?? 'total' : s.scope }),
  terrain: (s: Selection) =>
    get<TerrainResponse>('terrain', { ...common(s), h: s.ty, w: s.tx, peaks: s.peaks }),
  series: () => get<SeriesResponse>('series'),
  /** The trace's lanes in a window (ns since the first event; null = all) at `w` pixels, the
   * `flag`ged event's merged timeline. */
  timeline: (_s: Selection, window: [number, number] | null, w: number, flag: number | null) =>
    get<TimelineResponse>('timeline', { from_ns: window?.[0], to_ns: window?.[1], w: Math.round(w), flag }),
  trend: (s: Selection, event: number) => get<TrendResponse>('trend', { event, metric: s.metric, kind: s.kind, mode: s.mode }),
  /** Kiviat tubes: `threadsList` (comma-separated) or the server's default threads plus `thread`. */
  kiviat: (s: Selection, o: { thread?: string | null; threadsList?: string | null; events?: number[] | null }) =>
    get<KiviatResponse>('kiviat', {
      metric: s.metric,
      kind: s.kind,
      mode: s.mode,
      thread: o.thread,
      threads_list: o.threadsList,
      events: o.events?.join(',') ?? null,
    }),
  pointcloud: (s: Selection, events: number[] | null, pointsMax: number) =>
    get<PointCloudResponse>('pointcloud', { ...at(s), metric: s.metric, kind: s.kind, events: events?.join(',') ?? null, points_max: pointsMax }),
};

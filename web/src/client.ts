// Typed access to the perfscape HTTP API (types generated from the Rust structs by ts-rs).

import type { CallTreeResponse } from './api/CallTreeResponse';
import type { CategoriesRequest } from './api/CategoriesRequest';
import type { CategoriesResponse } from './api/CategoriesResponse';
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
import type { TimelineSearchResponse } from './api/TimelineSearchResponse';
import type { TerrainResponse } from './api/TerrainResponse';
import type { ThreadsResponse } from './api/ThreadsResponse';
import type { CallTreeRequest } from './api/CallTreeRequest';
import type { UserEventsResponse } from './api/UserEventsResponse';
import type { FindingsResponse } from './api/FindingsResponse';
import type { FindingsRequest } from './api/FindingsRequest';
import type { ArchitectureResponse } from './api/ArchitectureResponse';
import type { ArchitectureRequest } from './api/ArchitectureRequest';
import type { UserEventsRequest } from './api/UserEventsRequest';
import type { UserEventDetail } from './api/UserEventDetail';
import type { UserEventRequest } from './api/UserEventRequest';
import type { EventRequest } from './api/EventRequest';
import type { EventsRequest } from './api/EventsRequest';
import type { KiviatRequest } from './api/KiviatRequest';
import type { MatrixRequest } from './api/MatrixRequest';
import type { OverviewRequest } from './api/OverviewRequest';
import type { PointCloudRequest } from './api/PointCloudRequest';
import type { RowsRequest } from './api/RowsRequest';
import type { TerrainRequest } from './api/TerrainRequest';
import type { ThreadsRequest } from './api/ThreadsRequest';
import type { TimelineRequest } from './api/TimelineRequest';
import type { TimelineSearchRequest } from './api/TimelineSearchRequest';
import type { TrendRequest } from './api/TrendRequest';
import type { DiffMatrixRequest } from './api/DiffMatrixRequest';
import type { DiffMatrixResponse } from './api/DiffMatrixResponse';
import type { DiffRequest } from './api/DiffRequest';
import type { DiffTreeRequest } from './api/DiffTreeRequest';
import type { DiffTreeResponse } from './api/DiffTreeResponse';
import type { ScalingRequest } from './api/ScalingRequest';
import type { ScalingResponse } from './api/ScalingResponse';
import type { DiffResponse } from './api/DiffResponse';
import type { DiffThreadsRequest } from './api/DiffThreadsRequest';
import type { DiffThreadsResponse } from './api/DiffThreadsResponse';
import type { StoreListing } from './api/StoreListing';
import type { CommRequest } from './api/CommRequest';
import type { CommResponse } from './api/CommResponse';
import type { LineHeat } from './api/LineHeat';
import type { SourceRequest } from './api/SourceRequest';
import type { DisasmRequest } from './api/DisasmRequest';
import type { DisasmResponse } from './api/DisasmResponse';
import type { SourceResponse } from './api/SourceResponse';
import type { Dashboard } from './api/Dashboard';
import type { SqlAnswer } from './api/SqlAnswer';
import type { SqlRequest } from './api/SqlRequest';
import type { ReplayRequest } from './api/ReplayRequest';
import type { ReplayStatus } from './api/ReplayStatus';
import { REPORT, recorded, sqlKey } from './report';
import type { State } from './state';

/** An answer of the server that is not a success (its message names the request; `detail` is
 * the server's own message). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status = 0,
    readonly detail = message,
  ) {
    super(message);
  }
}

/** Throws an `ApiError` for an answer that is not a success: the message of its JSON body
 * (`{"error": ...}`), else its status. */
async function check(url: string, res: Response): Promise<void> {
  if (res.ok) return;
  let msg = `${res.status} ${res.statusText}`;
  try {
    msg = (await res.json()).error ?? msg;
  } catch {
    /* not JSON */
  }
  throw new ApiError(`${url}: ${msg}`, res.status, msg);
}

/** A recorded answer of a report (./report.ts), as `check` would give it. */
function fromReport<T>(url: string, r: { status: number; body: unknown }): T {
  if (r.status >= 200 && r.status < 300) return r.body as T;
  const msg = (r.body as { error?: string } | null)?.error ?? `${r.status}`;
  throw new ApiError(`${url}: ${msg}`, r.status, msg);
}

/** The query of a request of type `R` (one of the request types generated from the server's
 * Rust structs, `./api/*Request.ts`): its fields, each absent when null or undefined; a field
 * whose text form is a comma-separated list (`EventIds`, `ThreadAddrs`) may be given as an
 * array. A parameter the endpoint does not take, or a value outside an enum, does not compile. */
export type Query<R> = { [K in keyof R]?: R[K] | null | (NonNullable<R[K]> extends string ? readonly (string | number)[] : never) };

/** `GET /api/<path>?<query>` as JSON; `signal` cancels it (the promise then rejects with an
 * `AbortError`). */
async function get<T, R = Record<string, never>>(path: string, params: Query<R> = {}, signal?: AbortSignal): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params as Record<string, unknown>)) {
    if (v === null || v === undefined || v === '') continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const url = `/api/${path}${q.size ? `?${q}` : ''}`;
  if (REPORT) return fromReport<T>(url, recorded(REPORT, url.slice('/api/'.length)));
  const res = await fetch(url, { credentials: 'same-origin', signal });
  await check(url, res);
  return (await res.json()) as T;
}

/** `POST /api/<path>` with a JSON body, answered with JSON. */
async function post<T, B>(path: string, body: B, signal?: AbortSignal): Promise<T> {
  const url = `/api/${path}`;
  if (REPORT) {
    const b = body as { query?: string; params?: Record<string, unknown> };
    const key = path === 'sql' ? sqlKey(b.query ?? '', b.params) : path;
    return fromReport<T>(url, recorded(REPORT, key));
  }
  const res = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  await check(url, res);
  return (await res.json()) as T;
}

/** The profile a request reads: a sample of a run observed over time (none = the final state /
 * newest sample), cumulative or delta. */
export function at(s: State) {
  return { sample: s.sample, mode: s.mode === 'cumulative' ? null : s.mode };
}

/** Parameters every view request carries (the sample, rows and the thread axis). */
export function common(s: State) {
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

type Signal = AbortSignal | undefined;

/** One function per endpoint (API.md); each takes the state it answers for and, last, an
 * optional `AbortSignal` that cancels the request. */
/** Lanes the timeline asks for at a time (the server's default page). */
export const TIMELINE_LANES = 64;

export const api = {
  /** `/api/run`: what was loaded. */
  run: () => get<RunInfo>('run'),
  /** `/api/store`: the runs of the store served with `--store DIR`. */
  store: (signal?: Signal) => get<StoreListing>('store', {}, signal),
  /** `/api/events`: the ranked event table. */
  events: (s: State, signal?: Signal) => get<EventsResponse, EventsRequest>('events', { ...at(s), metric: s.metric, kind: s.kind, callpaths: s.callpaths }, signal),
  /** `/api/rows`: the rows of the matrix views. */
  rows: (s: State, signal?: Signal) => get<RowsResponse, RowsRequest>('rows', { ...at(s), metric: s.metric, kind: s.kind, rows: s.rows, callpaths: s.callpaths }, signal),
  /** `/api/matrix`: a region of rows × thread positions at a resolution (with `wh`, `ww`: the whole run's colour range). */
  matrix: (s: State, r: { r0: number; r1: number; t0: number; t1: number; h: number; w: number; wh?: number; ww?: number }, signal?: Signal) =>
    get<MatrixResponse, MatrixRequest>('matrix', { ...common(s), reduce: s.reduce, thread: s.thread, ...r }, signal),
  /** `/api/threads`: the thread axis (and its clusters). */
  threads: (s: State, signal?: Signal) => get<ThreadsResponse, ThreadsRequest>('threads', common(s), signal),
  /** `/api/overview`: the reduced strips of the whole run, `w` thread bins. */
  overview: (s: State, w: number, signal?: Signal) =>
    get<OverviewResponse, OverviewRequest>('overview', { ...common(s), reduce: s.reduce, skip: s.skip, bin: s.bin, strips: s.strips, w }, signal),
  /** `/api/event/{id}`: one event across threads, at most `points` per-thread values. */
  event: (s: State, id: number, points: number, signal?: Signal) =>
    get<EventDetail, EventRequest>(`event/${id}`, { ...at(s), metric: s.metric, kind: s.kind, bins: s.bins || null, points }, signal),
  /** `/api/categories`: time per category (threads in at most `points` bins, sorted by category
   * `sort`), the selected thread's, POP's metrics. */
  categories: (s: State, sort: number | null, points: number, signal?: Signal) =>
    get<CategoriesResponse, CategoriesRequest>('categories', { ...at(s), metric: s.metric, sort, points, thread: s.thread }, signal),
  /** `/api/calltree` in the state's scope (the selected thread for `thread`). */
  calltree: (s: State, signal?: Signal) =>
    get<CallTreeResponse, CallTreeRequest>('calltree', { ...at(s), metric: s.metric, scope: s.scope === 'thread' ? s.thread ?? 'total' : s.scope }, signal),
  /** `/api/userevents`: every user event, with the selected thread's own statistics. */
  userEvents: (s: State, signal?: Signal) =>
    get<UserEventsResponse, UserEventsRequest>('userevents', { ...at(s), thread: s.thread }, signal),
  /** `/api/userevent/{id}`: one user event on every thread (at most `points`). */
  userEvent: (s: State, id: number, points: number, signal?: Signal) =>
    get<UserEventDetail, UserEventRequest>(`userevent/${id}`, { ...at(s), points }, signal),
  /** `/api/source`: a source file (the state's `sfile`, else the selected event's file, else the
   * hottest) with each line's `heat` (the thread's value for `heat = thread`) and statistics. */
  source: (s: State, heat: LineHeat, thread: string | null, signal?: Signal) =>
    get<SourceResponse, SourceRequest>('source', { ...at(s), metric: s.metric, kind: s.kind, file: s.sfile || null, event: s.event, heat, thread }, signal),
  /** `/api/disasm`: the instructions of lines `first..=last` of `file` in the served executable. */
  disasm: (s: State, file: string, first: number, last: number, signal?: Signal) =>
    get<DisasmResponse, DisasmRequest>('disasm', { ...at(s), metric: s.metric, kind: s.kind, file, first, last }, signal),
  /** `/api/findings`: what is wrong with the run, ranked by the time it costs. */
  findings: (s: State, signal?: Signal) => get<FindingsResponse, FindingsRequest>('findings', { ...at(s), metric: s.metric }, signal),
  /** `/api/architecture`: processes with their time per category and the channels between them. */
  architecture: (s: State, signal?: Signal) => get<ArchitectureResponse, ArchitectureRequest>('architecture', { ...at(s), metric: s.metric }, signal),
  /** `/api/terrain` at the terrain's resolution. */
  terrain: (s: State, signal?: Signal) => get<TerrainResponse, TerrainRequest>('terrain', { ...common(s), h: s.ty, w: s.tx, peaks: s.peaks }, signal),
  /** `/api/series`: the samples of a run observed over time. */
  series: () => get<SeriesResponse>('series'),
  /** `/api/timeline`: the trace's lanes `l0 .. l0 + TIMELINE_LANES` in a window (ns since the
   * first event; null = all) at `w` pixels, the `flag`ged event's merged timeline. */
  timeline: (window: [number, number] | null, w: number, flag: number | null, l0: number, signal?: Signal) =>
    get<TimelineResponse, TimelineRequest>(
      'timeline',
      { from_ns: window?.[0], to_ns: window?.[1], w: Math.round(w), flag: flag === null ? null : String(flag), l0, l1: l0 + TIMELINE_LANES },
      signal,
    ),
  /** `/api/timeline/search`: the slice whose name contains `q` after (`next`) or before
   * (`prev`) the one at (`at_ns`, `lane`), with the count of matches. */
  timelineSearch: (q: TimelineSearchRequest, signal?: Signal) => get<TimelineSearchResponse, TimelineSearchRequest>('timeline/search', q, signal),
  /** `/api/trend`: an event over every sample. */
  trend: (s: State, event: number, signal?: Signal) =>
    get<TrendResponse, TrendRequest>('trend', { event, metric: s.metric, kind: s.kind, mode: s.mode }, signal),
  /** `/api/kiviat`: tubes of `threadsList` (comma-separated) or of the server's default threads
   * plus `thread`. */
  kiviat: (s: State, o: { thread?: string | null; threadsList?: string | null; events?: number[] | null }, signal?: Signal) =>
    get<KiviatResponse, KiviatRequest>('kiviat', { metric: s.metric, kind: s.kind, mode: s.mode, thread: o.thread, threads_list: o.threadsList, events: o.events }, signal),
  /** `/api/diff`: run A against compared run `s.cmp`, per event. */
  diff: (s: State, n: number, signal?: Signal) =>
    get<DiffResponse, DiffRequest>(
      'diff',
      { run: s.cmp, metric: s.metric, kind: s.kind, normalize: s.cmpnorm === 'auto' ? null : s.cmpnorm, callpaths: s.callpaths, sort: s.dsort, n },
      signal,
    ),
  /** `/api/diff/matrix`: the diff heat map, `rows` events × `w` bins of the common threads. */
  diffMatrix: (s: State, rows: number, w: number, signal?: Signal) =>
    get<DiffMatrixResponse, DiffMatrixRequest>(
      'diff/matrix',
      { run: s.cmp, metric: s.metric, kind: s.kind, callpaths: s.callpaths, show: s.dshow === 'ratio' ? 'log_ratio' : 'delta', rows, w: Math.round(w) },
      signal,
    ),
  /** `/api/diff/calltree`: the call trees of A and of run `s.cmp` as one. */
  diffTree: (s: State, signal?: Signal) =>
    get<DiffTreeResponse, DiffTreeRequest>('diff/calltree', { run: s.cmp, metric: s.metric, normalize: s.cmpnorm === 'auto' ? null : s.cmpnorm }, signal),
  /** `/api/scaling`: a scaling study of the served runs. */
  /** The communication matrix: senders `r0..r1` × receivers `c0..c1` in at most h × w bins. */
  comm: (s: State, q: Omit<CommRequest, 'sample' | 'mode'>, signal?: Signal) => get<CommResponse, CommRequest>('comm', { ...at(s), ...q }, signal),
  scaling: (s: State, signal?: Signal) => get<ScalingResponse, ScalingRequest>('scaling', { metric: s.metric, kind: s.kind, callpaths: s.callpaths }, signal),
  /** `/api/diff/threads`: run A's event against the same event of run `s.cmp`, per thread. */
  diffThreads: (s: State, event: number, signal?: Signal) =>
    get<DiffThreadsResponse, DiffThreadsRequest>('diff/threads', { run: s.cmp, event, metric: s.metric, kind: s.kind }, signal),
  /** `/api/pointcloud`: every thread as a point of the `events`' values. */
  pointcloud: (s: State, events: number[] | null, pointsMax: number, signal?: Signal) =>
    get<PointCloudResponse, PointCloudRequest>('pointcloud', { ...at(s), metric: s.metric, kind: s.kind, events, points_max: pointsMax }, signal),
  /** `GET /api/dashboard/{index}`: a dashboard file served with `--dashboard`, as read now. */
  dashboard: (index: number, signal?: Signal) => get<Dashboard>(`dashboard/${index}`, {}, signal),
  /** `GET /api/layout`: the page's own layout, a dashboard (the built-in one, or `--layout FILE`). */
  layout: (signal?: Signal) => get<Dashboard>('layout', {}, signal),
  /** `POST /api/sql`: one read-only query over the served runs (or store), its placeholders
   * (`$event`, `$thread`, `$sample`, `$metric`, `$run`) bound to `params`. */
  sql: (request: SqlRequest, signal?: Signal) => post<SqlAnswer, SqlRequest>('sql', request, signal),
  /** A run served with `--replay`: start it again from its first sample (every page follows). */
  replayRestart: () => post<ReplayStatus, ReplayRequest>('replay', { action: 'restart' }),
};

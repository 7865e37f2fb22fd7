// perfscape front end: fetches the run, lays out the panels and links every view through the
// one selection in ./state.ts.

import './style.css';
import { api } from './client';
import { Context, type View, charts, showError } from './context';
import type { Dashboard } from './api/Dashboard';
import { Board, dashboardEvent, panelIds } from './dashboard/dashboard';
import type { Env } from './fields';
import { esc, shorten, threadName } from './format';
import { header, liveHandler, sampleBar } from './header';
import { LoadingScreen, initKeyboard, initTheme, pageTools } from './page';
import type { PanelDef } from './panel';
import { FIELDS, SCHEMA, SCOPES } from './schema';
import { REPORT } from './report';
import { type EventHandler, dispatch, joinSession } from './share';
import { type Key, type State, fromUrl, store, toUrl } from './state';
import { CallTreeView } from './views/calltree';
import { CommView } from './views/comm';
import { CategoriesView } from './views/categories';
import { CompareView } from './views/compare';
import { EventView } from './views/eventview';
import { HeatmapView } from './views/heatmap';
import { KiviatView } from './views/kiviat';
import { OverviewView } from './views/overview';
import { PointCloudView } from './views/pointcloud';
import { RankedView } from './views/ranked';
import { RunInfoView } from './views/runinfo';
import { UserEventsView } from './views/userevents';
import { FindingsView } from './views/findings';
import { ArchitectureView } from './views/architecture';
import { ScalingView } from './views/scaling';
import { TerrainView } from './views/terrain';
import { TimelineView } from './views/timeline';
import { TrendView } from './views/trend';
import { SourceView } from './views/source';

const hasSamplesRun = (run: { samples: number; live: boolean }) => run.samples > 0 || run.live;
const hasSamples = (ctx: Context) => hasSamplesRun(ctx.run);

/** The built-in views a dashboard's panel may show (`view = "ranked"`): their ids, default
 * titles and when a run has something for them to show. Their layout on the page is itself a
 * dashboard file (GET /api/layout: crates/perfscape-server/src/dashboard/builtin.toml). */
const PANELS: PanelDef[] = [
  { id: 'compare', title: 'Runs side by side: A against B', view: CompareView, when: (c) => c.run.compared.length > 0 },
  { id: 'scaling', title: 'Scaling: the selected event against the process count', view: ScalingView, when: (c) => c.run.scaling },
  { id: 'ranked', title: 'Ranked events', view: RankedView },
  { id: 'timeline', title: 'Timeline: threads over time', view: TimelineView, when: (c) => c.run.timeline },
  { id: 'heatmap', title: 'Heat map: events × threads', view: HeatmapView },
  { id: 'overview', title: 'Overview', view: OverviewView },
  { id: 'event', title: 'Event across threads', view: EventView },
  { id: 'source', title: 'Source: the lines with the heat of every thread', view: SourceView, when: (c) => c.run.source_files > 0 },
  { id: 'calltree', title: 'Call tree', view: CallTreeView },
  { id: 'categories', title: 'Categories: what the time is spent on, POP efficiency', view: CategoriesView },
  { id: 'terrain', title: '3D terrain', view: TerrainView },
  { id: 'findings', title: 'Findings: what costs time, and why', view: FindingsView },
  { id: 'architecture', title: 'Processes and channels', view: ArchitectureView, when: (c) => c.run.nodes > 1 },
  { id: 'userevents', title: 'User events', view: UserEventsView, when: (c) => c.run.user_events > 0 },
  { id: 'runinfo', title: 'Run information', view: RunInfoView },
  { id: 'trend', title: 'Over time: event across threads', view: TrendView, when: hasSamples },
  { id: 'kiviat', title: 'Kiviat tube', view: KiviatView, when: hasSamples },
  { id: 'pointcloud', title: 'Threads as points (3 events)', view: PointCloudView },
  { id: 'comm', title: 'Communication matrix: senders × receivers', view: CommView, when: (c) => c.run.comm },
];

// Every group of panel settings in the schema belongs to a panel of the page.
for (const id of Object.keys(SCHEMA.panels)) {
  if (!PANELS.some((p) => p.id === id)) console.error(`perfscape: the schema has settings of an unknown panel \`${id}\``);
}

async function start(): Promise<void> {
  const app = document.getElementById('app') as HTMLElement;
  initTheme();
  initKeyboard();
  // Never a blank page: what is loading and what is being fetched, until the panels are there.
  const loading = new LoadingScreen(app);
  let run;
  try {
    run = await api.run();
  } catch (e) {
    showError(app, e);
    return;
  }
  if (run.status === 'waiting') {
    // A live run before its first sample: wait for it, then start.
    app.innerHTML = `<div class="fatal"><h1>perfscape</h1><p>Live run <code>${esc(run.path)}</code>: waiting for the first sample…</p></div>`;
    joinSession((ev) => {
      if ((ev as { event?: string }).event === 'sample') window.location.reload();
    }, false);
    return;
  }
  if (run.status !== 'ok') {
    console.error(`perfscape: the run did not load: ${run.error}`);
    app.innerHTML = `<div class="fatal"><h1>perfscape</h1><p>The run <code>${esc(run.path)}</code> could not be loaded:</p><pre class="error">${esc(run.error ?? 'unknown error')}</pre></div>`;
    return;
  }
  loading.say(`${run.path} (${run.threads.toLocaleString('en-US')} threads, ${run.flat_events} events)`, hasSamplesRun(run) ? 'fetching the samples over time…' : "fetching the page's layout…");
  // The tab names the run (several tabs of perfscape are told apart).
  document.title = `${run.path.split('/').filter(Boolean).pop() ?? run.path} · perfscape`;
  // A server from before dashboards: none.
  run.dashboards ??= [];
  run.layout ??= null;
  const ctx = new Context(run);
  if (hasSamples(ctx)) {
    try {
      ctx.series = await api.series();
    } catch (e) {
      console.error(e);
    }
  }
  loading.say(`${run.path} (${run.threads.toLocaleString('en-US')} threads, ${run.flat_events} events)`, "fetching the page's layout…");
  const env: Env = { run, panels: PANELS.filter((p) => p.when?.(ctx) ?? true).map((p) => p.id) };
  // A report (no server) shows its dashboards only: the first unless the URL names another.
  if (REPORT && store.get().dashboard === null && run.dashboards.length > 0) store.set({ dashboard: 0 });
  /** The dashboard shown for selection `s`: a served one, or the page's layout (null). */
  const chosen = (s: State): number | null => (s.dashboard !== null && s.dashboard < run.dashboards.length ? s.dashboard : null);
  // The dashboard (or layout) fetched first: its panels are the ones `focus` may name.
  let prefetched: Dashboard | null = null;
  const first = chosen(store.get());
  if (!REPORT || first !== null) {
    try {
      prefetched = await (first === null ? api.layout() : api.dashboard(first));
      if (!prefetched.error) env.panels = panelIds(prefetched);
    } catch (e) {
      console.error(e);
    }
  }
  const views = new Map<string, View>();
  // Values of the URL that do not fit this run go back to their defaults.
  store.fit(env);
  const head = header(ctx, env);
  head.appendChild(pageTools());
  // The header and sample bar above the loading message; it goes when the first panel is there.
  app.prepend(head);
  if (hasSamples(ctx)) head.after(sampleBar(ctx));
  const what = store.get().event === null && store.get().dashboard === null ? 'fetching the ranked events (the largest is selected first), then the views’ first answers…' : 'fetching the views’ first answers…';
  loading.say(`${run.path} (${run.threads.toLocaleString('en-US')} threads, ${run.flat_events} events)`, what);
  loading.doneWhen(app, 'main .panel, main .dash-error');

  /** The dashboard shown: the page's layout (index null) or a served dashboard. */
  let board: Board | null = null;
  const applyFocus = (f: string | null) => {
    document.body.classList.toggle('focused', !!f);
    for (const el of app.querySelectorAll<HTMLElement>('main .panel')) el.classList.toggle('focus', el.dataset.view === f);
  };
  /** The panels shown now are `ids`: a maximized panel not among them is restored. */
  const panelsShown = (ids: string[]) => {
    env.panels = ids;
    const f = store.get().focus;
    if (f !== null && !ids.includes(f)) queueMicrotask(() => store.set({ focus: null }));
    applyFocus(store.get().focus);
  };
  /** Closes a panel: its view is disposed and no longer updated. */
  const close = (id: string) => {
    views.get(id)?.dispose?.();
    views.delete(id);
  };
  /** Shows dashboard `index` (null: the layout) in place of the one shown; `d`: its answer,
   * when already fetched. */
  const showBoard = (index: number | null, d: Dashboard | null = null): Promise<void> => {
    board?.dispose();
    board = new Board(index, ctx, views, PANELS, panelsShown);
    app.appendChild(board.grid);
    return board.load(d);
  };
  const layout = (s: State, d: Dashboard | null = null): Promise<unknown> | null => {
    const index = chosen(s);
    if (board && board.index === index) return null;
    if (REPORT && index === null) return null;
    return showBoard(index, d && d.index === index ? d : null);
  };

  let shownSeq = 0;
  const showSelection = async (sel: State) => {
    const el = document.getElementById('selection');
    if (!el) return;
    const seq = ++shownSeq;
    let name = 'no event';
    if (sel.event !== null) {
      const all = await ctx.events({ ...sel, callpaths: true });
      name = all.rows.find((r) => r.id === sel.event)?.name ?? `event #${sel.event}`;
    }
    if (seq !== shownSeq) return;
    el.textContent = `${shorten(name, 48)} · ${sel.thread ? threadName(sel.thread) : 'all threads'}`;
    el.title = name;
  };
  store.subscribe((sel, changed) => {
    // The views shown before this change hear it; a new layout's views draw on their own.
    const before = [...views.values()];
    if (changed.has('dashboard')) layout(sel)?.catch((e) => console.error(e));
    if (changed.has('focus')) applyFocus(sel.focus);
    if (changed.has('event') || changed.has('thread') || changed.has('revision')) showSelection(sel).catch((e) => console.error(e));
    for (const v of before) {
      if (![...views.values()].includes(v)) continue;
      Promise.resolve(v.update(sel, changed)).catch((e) => console.error(e));
    }
  });
  // A handle for tests and debugging in the console.
  const handle = { store, ctx, charts, views, close, schema: describeSchema(), url: { fromUrl, toUrl }, board: () => board };
  (window as unknown as { perfscape: object }).perfscape = handle;
  // Back and Forward step through the selections (HISTORY_KEYS in state.ts).
  if (!REPORT) store.followHistory();
  const s = store.get();
  showSelection(s).catch((e) => console.error(e));
  await layout(s, prefetched);
  loading.done();
  applyFocus(store.get().focus);
  // Server events: a live run's samples, a dashboard file changed.
  const handlers: EventHandler[] = [];
  // A replayed run, even finished, may start again (`replay from start` on any page).
  if (run.live || run.replay) handlers.push(liveHandler(ctx));
  if (run.dashboards.length > 0 || run.layout !== null) {
    handlers.push((ev) => {
      const d = dashboardEvent(ev);
      const kind = (ev as { event?: string } | null)?.event;
      if (d && board && board.index === d.index && d.revision !== board.revision) board.load().catch((e) => console.error(e));
      // Reconnected: the file may have changed meanwhile.
      else if (kind === 'connected' && board && board.draws > 0) board.load().catch((e) => console.error(e));
    });
  }
  if (!REPORT && (run.shared || run.live || run.replay || run.dashboards.length > 0 || run.layout !== null)) joinSession(dispatch(handlers), run.shared);
  document.body.dataset.ready = '1';
}

/** The schema as plain data (for tests and the console): per key its group, default, allowed
 * values, range, and whether it is kept in the URL and shared. */
function describeSchema(): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [k, f] of Object.entries(FIELDS)) {
    out[k] = {
      scope: SCOPES[k as Key],
      default: f.default,
      values: f.choices?.map((c) => c.value) ?? null,
      min: f.min ?? null,
      max: f.max ?? null,
      url: f.url,
      shared: f.shared,
    };
  }
  return out;
}

start().catch((e) => {
  console.error(e);
  showError(document.getElementById('app') as HTMLElement, e);
});

// perfscape front end: fetches the run, lays out the panels and links every view through the
// one selection in ./state.ts.

import './style.css';
import { api } from './client';
import { Context, type View, charts, showError } from './context';
import { esc, shorten } from './format';
import { joinSession } from './share';
import { store, type Selection } from './state';
import { CallTreeView } from './views/calltree';
import { EventView } from './views/eventview';
import { HeatmapView } from './views/heatmap';
import { KiviatView } from './views/kiviat';
import { OverviewView } from './views/overview';
import { PointCloudView } from './views/pointcloud';
import { RankedView } from './views/ranked';
import { RunInfoView } from './views/runinfo';
import { TerrainView } from './views/terrain';
import { TimelineView } from './views/timeline';
import { TrendView } from './views/trend';

interface PanelDef {
  id: string;
  title: string;
  make: (body: HTMLElement, tools: HTMLElement, ctx: Context) => View;
  /** Shown only for runs with samples over time. */
  samplesOnly?: boolean;
  /** Shown only for traces. */
  traceOnly?: boolean;
}

const PANELS: PanelDef[] = [
  { id: 'ranked', title: 'Ranked events', make: (b, t, c) => new RankedView(b, t, c) },
  { id: 'timeline', title: 'Timeline: threads over time', make: (b, t, c) => new TimelineView(b, t, c), traceOnly: true },
  { id: 'heatmap', title: 'Heat map: events × threads', make: (b, t, c) => new HeatmapView(b, t, c) },
  { id: 'overview', title: 'Overview', make: (b, t, c) => new OverviewView(b, t, c) },
  { id: 'event', title: 'Event across threads', make: (b, t, c) => new EventView(b, t, c) },
  { id: 'calltree', title: 'Call tree', make: (b, t, c) => new CallTreeView(b, t, c) },
  { id: 'terrain', title: '3D terrain', make: (b, t, c) => new TerrainView(b, t, c) },
  { id: 'runinfo', title: 'Run information', make: (b, t, c) => new RunInfoView(b, t, c) },
  { id: 'trend', title: 'Over time: event across threads', make: (b, t, c) => new TrendView(b, t, c), samplesOnly: true },
  { id: 'kiviat', title: 'Kiviat tube', make: (b, t, c) => new KiviatView(b, t, c), samplesOnly: true },
  { id: 'pointcloud', title: 'Threads as points (3 events)', make: (b, t, c) => new PointCloudView(b, t, c) },
];

function select(label: string, options: [string, string][], value: string, onChange: (v: string) => void): HTMLElement {
  const wrap = document.createElement('label');
  wrap.className = 'ctl';
  wrap.append(`${label} `);
  const sel = document.createElement('select');
  for (const [v, text] of options) {
    const o = document.createElement('option');
    o.value = v;
    o.textContent = text;
    sel.appendChild(o);
  }
  sel.value = value;
  sel.addEventListener('change', () => onChange(sel.value));
  wrap.appendChild(sel);
  return wrap;
}

function header(ctx: Context, s: Selection): HTMLElement {
  const h = document.createElement('header');
  const run = ctx.run;
  h.innerHTML = `<span class="brand">perfscape</span><span class="runpath" title="${esc(run.path)}">${esc(run.path)}</span>
    <span class="facts">${run.threads.toLocaleString('en-US')} threads · ${run.flat_events} events${run.callpath_events ? ` + ${run.callpath_events} callpaths` : ''}</span>`;
  const ctl = document.createElement('span');
  ctl.className = 'controls';
  ctl.append(
    select('Metric', run.metrics.map((m, i) => [String(i), `${m.name} (${m.unit})`]), String(s.metric), (v) =>
      store.set({ metric: Number(v) }),
    ),
    select('Value', [['exclusive', 'exclusive'], ['inclusive', 'inclusive'], ['calls', 'calls']], s.kind, (v) =>
      store.set({ kind: v as Selection['kind'] }),
    ),
    select('Rows', [['events', 'events'], ...(run.sample_events ? ([['lines', 'source lines']] as [string, string][]) : [])], s.rows, (v) =>
      store.set({ rows: v as Selection['rows'], r0: null, r1: null }),
    ),
    select('Reduce', [['max', 'max (keep peaks)'], ['sum', 'sum']], s.reduce, (v) => store.set({ reduce: v as Selection['reduce'] })),
  );
  if (run.has_callpaths) {
    const cb = document.createElement('label');
    cb.className = 'ctl';
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = s.callpaths;
    box.addEventListener('change', () => store.set({ callpaths: box.checked, r0: null, r1: null }));
    cb.append(box, ' callpaths');
    ctl.appendChild(cb);
  }
  const sel = document.createElement('span');
  sel.className = 'selection';
  sel.id = 'selection';
  ctl.appendChild(sel);
  h.appendChild(ctl);
  return h;
}

/** The sample bar of a run observed over time: a slider over the samples (its right end is the
 * final state, or the newest sample of a live run), the sample's name, cumulative/delta, and
 * in live mode whether the views follow the newest sample. */
function sampleBar(ctx: Context, s: Selection): HTMLElement {
  const bar = document.createElement('div');
  bar.className = 'samplebar';
  bar.id = 'samplebar';
  const n = () => ctx.series?.samples.length ?? 0;
  const slider = document.createElement('input');
  slider.type = 'range';
  slider.min = '0';
  slider.id = 'sample-slider';
  const label = document.createElement('span');
  label.className = 'sample-name';
  const mode = select('Values', [['cumulative', 'cumulative'], ['delta', 'change since previous sample']], s.mode, (v) =>
    store.set({ mode: v as Selection['mode'] }),
  );
  const live = document.createElement('span');
  live.className = 'live-badge';
  const sync = (sel: Selection) => {
    const count = n();
    // Finished runs: position `count` is the final state; live runs: the newest sample.
    const end = ctx.run.live ? count - 1 : count;
    slider.max = String(Math.max(0, end));
    slider.value = String(sel.sample ?? end);
    const name = sel.sample === null ? (ctx.run.live ? `newest: ${ctx.series?.samples[count - 1]?.name ?? 'none yet'}` : 'final state') : ctx.series?.samples[sel.sample]?.name ?? '';
    const info = sel.sample === null ? null : ctx.series?.samples[sel.sample];
    label.textContent = `${sel.sample === null ? '' : `sample ${sel.sample}: `}${name}${info && !info.complete ? ` (${info.missing} threads missing)` : ''} · ${count} samples`;
    live.textContent = ctx.run.live ? (sel.sample === null ? '● live, following' : '● live (paused: drag right to follow)') : '';
  };
  slider.addEventListener('input', () => {
    const v = Number(slider.value);
    const end = Number(slider.max);
    store.set({ sample: v >= end ? null : v });
  });
  bar.append('Sample ', slider, label, mode, live);
  sync(s);
  store.subscribe((sel, changed) => {
    if (changed.has('sample') || changed.has('revision')) sync(sel);
  });
  return bar;
}

/** Live runs: each new (or amended) sample refreshes the sample list and moves the views that
 * follow the newest sample; redraws are coalesced to one per 250 ms. */
function liveHandler(ctx: Context): (ev: unknown) => void {
  let pending = false;
  let busy = false;
  const refresh = async () => {
    if (busy) {
      pending = true;
      return;
    }
    busy = true;
    try {
      ctx.series = await api.series();
      ctx.run.samples = ctx.series.samples.length;
      ctx.run.live = ctx.series.live;
      ctx.invalidate();
      store.set({ revision: store.get().revision + 1 });
    } catch (e) {
      console.error(e);
    }
    setTimeout(() => {
      busy = false;
      if (pending) {
        pending = false;
        refresh();
      }
    }, 250);
  };
  const live = window as unknown as { perfscapeLive: { events: number; samples: number } };
  live.perfscapeLive = { events: 0, samples: 0 };
  return (ev) => {
    const kind = (ev as { event?: string }).event;
    live.perfscapeLive.events++;
    if (kind === 'sample') live.perfscapeLive.samples++;
    if (kind === 'sample' || kind === 'amended' || kind === 'finished' || kind === 'connected') refresh();
  };
}

async function start(): Promise<void> {
  const app = document.getElementById('app') as HTMLElement;
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
  const ctx = new Context(run);
  const s = store.get();
  app.appendChild(header(ctx, s));
  const hasSamples = run.samples > 0 || run.live;
  if (hasSamples) {
    try {
      ctx.series = await api.series();
    } catch (e) {
      console.error(e);
    }
    document.body.classList.add('has-samples');
    app.appendChild(sampleBar(ctx, s));
  }
  if (run.timeline) document.body.classList.add('has-timeline');
  const grid = document.createElement('main');
  grid.className = 'grid';
  app.appendChild(grid);
  const views: View[] = [];
  for (const def of PANELS) {
    if (def.samplesOnly && !hasSamples) continue;
    if (def.traceOnly && !run.timeline) continue;
    const panel = document.createElement('section');
    panel.className = `panel panel-${def.id}`;
    panel.id = `panel-${def.id}`;
    panel.dataset.view = def.id;
    const head = document.createElement('div');
    head.className = 'panel-head';
    const title = document.createElement('h2');
    title.textContent = def.title;
    const tools = document.createElement('div');
    tools.className = 'tools';
    const max = document.createElement('button');
    max.className = 'max';
    max.title = 'maximize / restore';
    max.textContent = '⤢';
    max.addEventListener('click', () => store.set({ focus: store.get().focus === def.id ? null : def.id }));
    head.append(title, tools, max);
    const body = document.createElement('div');
    body.className = 'panel-body';
    panel.append(head, body);
    grid.appendChild(panel);
    views.push(def.make(body, tools, ctx));
  }
  const applyFocus = (f: string | null, resize: boolean) => {
    document.body.classList.toggle('focused', !!f);
    for (const el of grid.querySelectorAll<HTMLElement>('.panel')) el.classList.toggle('focus', el.dataset.view === f);
    if (resize) requestAnimationFrame(() => views.forEach((v) => v.resize?.()));
  };
  const showSelection = async (sel: Selection) => {
    const el = document.getElementById('selection');
    if (!el) return;
    let name = 'no event';
    if (sel.event !== null) {
      const all = await ctx.events({ ...sel, callpaths: true });
      name = all.rows.find((r) => r.id === sel.event)?.name ?? `event #${sel.event}`;
    }
    el.textContent = `${shorten(name, 48)} · ${sel.thread ?? 'all threads'}`;
    el.title = name;
  };
  store.subscribe((sel, changed) => {
    if (changed.has('focus')) applyFocus(sel.focus, true);
    showSelection(sel);
    for (const v of views) {
      Promise.resolve(v.update(sel, changed)).catch((e) => console.error(e));
    }
  });
  // A handle for tests and debugging in the console.
  (window as unknown as { perfscape: object }).perfscape = { store, ctx, charts };
  applyFocus(s.focus, false);
  showSelection(s);
  const all = new Set(Object.keys(s) as (keyof Selection)[]);
  await Promise.all(views.map((v) => Promise.resolve(v.update(s, all)).catch((e) => console.error(e))));
  window.addEventListener('resize', () => views.forEach((v) => v.resize?.()));
  if (run.shared || run.live) joinSession(run.live ? liveHandler(ctx) : undefined, run.shared);
  document.body.dataset.ready = '1';
}

start().catch((e) => {
  console.error(e);
  showError(document.getElementById('app') as HTMLElement, e);
});

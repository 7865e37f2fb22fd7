// The page's bars: the header (run, facts, the selection's global controls, what is selected)
// and, for runs observed over time, the sample bar; and the live-run refresher.

import { api } from './client';
import type { Context } from './context';
import { checkboxFor, dynamicSelect, selectFor } from './controls';
import type { Env } from './fields';
import { esc, metricLabel } from './format';
import { REPORT } from './report';
import { type State, store } from './state';

/** A new row space shows all of it. */
const allRows = (): Partial<State> => ({ r0: null, r1: null });

/** The header: brand, run path, facts, and the controls of the linked selection. */
export function header(ctx: Context, env: Env): HTMLElement {
  const h = document.createElement('header');
  const run = ctx.run;
  h.innerHTML = `<span class="brand">perfscape</span><span class="runpath" title="${esc(run.path)}">${esc(run.path)}</span>
    <span class="facts">${run.threads.toLocaleString('en-US')} threads · ${run.flat_events} events${run.callpath_events ? ` + ${run.callpath_events} callpaths` : ''}</span>`;
  if (REPORT) {
    const note = document.createElement('span');
    note.className = 'facts report-note';
    note.textContent = `report made ${REPORT.generated} · no server: only what was recorded`;
    note.title = REPORT.cut.length ? `Not every selection is recorded:\n${REPORT.cut.join('\n')}` : 'Every selection of its panels is recorded';
    h.appendChild(note);
  }
  const ctl = document.createElement('span');
  ctl.className = 'controls';
  // Dashboard files served with --dashboard: shown in place of the built-in views.
  if (run.dashboards.length > 0) {
    // A report (no server) holds its dashboards only.
    const builtIn = REPORT ? [] : [{ value: null, label: 'Built-in views' }];
    const boards = dynamicSelect('dashboard', [...builtIn, ...run.dashboards.map((d) => ({ value: d.index, label: d.title }))], { env });
    boards.classList.add('dashboard-choice');
    ctl.appendChild(boards);
  }
  ctl.append(
    dynamicSelect(
      'metric',
      run.metrics.map((m, i) => ({ value: i, label: metricLabel(m) })),
    ),
    selectFor('kind'),
    selectFor('rows', { env, also: allRows }),
    selectFor('reduce'),
  );
  if (run.has_callpaths) ctl.appendChild(checkboxFor('callpaths', { also: allRows }));
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
export function sampleBar(ctx: Context): HTMLElement {
  const bar = document.createElement('div');
  bar.className = 'samplebar';
  bar.id = 'samplebar';
  const n = () => ctx.series?.samples.length ?? 0;
  const slider = document.createElement('input');
  slider.type = 'range';
  slider.min = '0';
  slider.id = 'sample-slider';
  slider.dataset.key = 'sample';
  slider.dataset.dynamic = '1';
  const label = document.createElement('span');
  label.className = 'sample-name';
  const live = document.createElement('span');
  live.className = 'live-badge';
  const sync = (sel: State) => {
    const count = n();
    // Finished runs: position `count` is the final state; live runs: the newest sample.
    const end = ctx.run.live ? count - 1 : count;
    slider.max = String(Math.max(0, end));
    slider.value = String(sel.sample ?? end);
    const name = sel.sample === null ? (ctx.run.live ? `newest: ${ctx.series?.samples[count - 1]?.name ?? 'none yet'}` : 'final state') : (ctx.series?.samples[sel.sample]?.name ?? '');
    const info = sel.sample === null ? null : ctx.series?.samples[sel.sample];
    const thinned = ctx.series?.samples.filter((x) => x.thinned).length ?? 0;
    label.textContent = `${sel.sample === null ? '' : `sample ${sel.sample}: `}${name}${info && !info.complete ? ` (${info.missing} threads missing)` : ''} · ${count} samples${thinned ? ` (${thinned} older ones thinned)` : ''}`;
    live.textContent = ctx.run.live ? (sel.sample === null ? '● live, following' : '● live (paused: drag right to follow)') : '';
  };
  resync = () => sync(store.get());
  slider.addEventListener('input', () => {
    const v = Number(slider.value);
    const end = Number(slider.max);
    store.set({ sample: v >= end ? null : keptNear(ctx.series?.samples ?? [], v) });
  });
  bar.append('Sample ', slider, label, selectFor('mode'), live);
  if (ctx.run.replay && !REPORT) bar.appendChild(replayButton());
  sync(store.get());
  store.subscribe((sel, changed) => {
    if (changed.has('sample') || changed.has('revision')) sync(sel);
  });
  return bar;
}

/** The kept sample nearest to `v` (the first at or after it, else the last before it): a
 * thinned sample (`serve --sample-window`) has no values to show. */
export function keptNear(samples: readonly { thinned: boolean }[], v: number): number {
  for (let i = v; i < samples.length; i++) if (!samples[i].thinned) return i;
  for (let i = Math.min(v, samples.length) - 1; i >= 0; i--) if (!samples[i].thinned) return i;
  return v;
}

/** Redraws the sample bar (its count) without a new revision of the views. */
let resync: (() => void) | null = null;

/** "replay from start" of a run served with `--replay`: the server writes it again from its
 * first sample, and every page (this one too) follows the restarted series. */
function replayButton(): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'replay-restart';
  b.id = 'replay-restart';
  b.textContent = '⏮ replay from start';
  b.title = 'write the replayed run again from its first sample (every open page follows)';
  b.addEventListener('click', () => {
    b.disabled = true;
    api
      .replayRestart()
      .catch((e) => console.error(e))
      .finally(() => (b.disabled = false));
  });
  return b;
}

/** Live runs: each new (or amended) sample refreshes the sample list and moves the views that
 * follow the newest sample; redraws are coalesced to one per 250 ms. */
export function liveHandler(ctx: Context): (ev: unknown) => void {
  let pending = false;
  let busy = false;
  const refresh = async () => {
    if (busy) {
      pending = true;
      return;
    }
    busy = true;
    try {
      const series = await api.series();
      ctx.series = series;
      ctx.run.samples = series.samples.length;
      ctx.run.live = series.live;
      live.perfscapeLive.counts.push(series.samples.length);
      if (series.samples.length === 0) {
        // Restarted, no sample yet: nothing to draw.
        resync?.();
      } else {
        ctx.invalidate();
        // A selected sample that was thinned meanwhile: its nearest kept one.
        const sel = store.get().sample;
        const moved = sel !== null && series.samples[sel]?.thinned ? { sample: keptNear(series.samples, sel) } : {};
        store.set({ ...moved, revision: store.get().revision + 1 });
      }
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
  // For tests and the console: events heard, and the sample count after each refresh.
  const live = window as unknown as { perfscapeLive: { events: number; samples: number; restarts: number; counts: number[] } };
  live.perfscapeLive = { events: 0, samples: 0, restarts: 0, counts: [ctx.series?.samples.length ?? 0] };
  return (ev) => {
    const kind = (ev as { event?: string }).event;
    live.perfscapeLive.events++;
    if (kind === 'sample') live.perfscapeLive.samples++;
    if (kind === 'restarted' && ctx.series) {
      // The replay starts again from its first sample: the series was emptied. The views keep
      // what they show until its first sample arrives; a page looking at an older sample
      // follows the newest again.
      live.perfscapeLive.restarts++;
      ctx.series = { ...ctx.series, samples: [], live: true };
      ctx.run.live = true;
      live.perfscapeLive.counts.push(0);
      if (store.get().sample !== null) store.set({ sample: null });
      resync?.();
    }
    // `lagged`: the page read too slowly and missed pushed messages; it reads the series again.
    if (kind === 'sample' || kind === 'amended' || kind === 'finished' || kind === 'connected' || kind === 'restarted' || kind === 'lagged') refresh();
  };
}

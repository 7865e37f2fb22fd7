// Runs side by side (`perfscape serve A B...`): run A (the page's run) against the compared
// run picked as B. Left, every event with its value in A and B, B − A with a diverging bar,
// B / A and the change as a share of A's run; sorted on the server by the column clicked.
// Right, the selected event thread by thread: B − A (or B / A) per thread, largest increase
// first, coloured on a diverging scale centred on 0 (or 1) whose legend gives the values.
// A click on a row selects the event in A (every other view follows); a click on a bar selects
// the thread.

import type * as echarts from 'echarts';
import type { DiffMatrixResponse } from '../api/DiffMatrixResponse';
import type { DiffResponse } from '../api/DiffResponse';
import type { DiffRowJson } from '../api/DiffRowJson';
import type { DiffSort } from '../api/DiffSort';
import type { DiffThreadsResponse } from '../api/DiffThreadsResponse';
import type { DiffTreeResponse } from '../api/DiffTreeResponse';
import { api } from '../client';
import { revealIn } from '../context';
import { dynamicSelect, selectFor } from '../controls';
import { esc, ratio, shorten, signed, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { initiallyOpen, renderDiffTree } from './comparetree';
import { type Key, type State, store, touched } from '../state';

/** Rows asked of the server (the table scrolls). */
const ROWS = 500;

/** Diverging colours: decrease, no change, increase. */
const DIVERGING = ['#2563eb', '#f3f4f6', '#dc2626'];

type Col = { key: string; label: string; sort: DiffSort | null; show: (r: DiffRowJson, u: string, max: number) => string };

const COLS: Col[] = [
  { key: 'name', label: 'Event', sort: null, show: (r) => esc(shorten(r.name, 56)) },
  {
    key: 'change',
    label: 'Change',
    sort: null,
    show: (r) =>
      r.change === 'matched'
        ? r.note === 'exact'
          ? ''
          : `<small title="matched by routine name">${r.note === 'throttled' ? 'throttled in one run' : 'other source location'}</small>`
        : `<b class="${r.change}">${r.change}</b>`,
  },
  { key: 'a', label: 'A', sort: 'a', show: (r, u) => value(r.a, u) },
  { key: 'b', label: 'B', sort: 'b', show: (r, u) => value(r.b, u) },
  {
    key: 'delta',
    label: 'B − A',
    sort: 'delta',
    show: (r, u, max) =>
      `${signed(r.delta, u)} <span class="dbar ${r.delta >= 0 ? 'up' : 'down'}" data-w="${max > 0 ? Math.round((40 * Math.abs(r.delta)) / max) : 0}"></span>`,
  },
  { key: 'ratio', label: 'B / A', sort: 'ratio', show: (r) => (r.ratio === null ? '–' : ratio(r.ratio)) },
  { key: 'pct', label: '% of A', sort: 'abs_delta', show: (r) => (r.percent_of_a === null ? '–' : `${r.percent_of_a > 0 ? '+' : ''}${r.percent_of_a.toFixed(2)}%`) },
];

/** The compare panel: the diff table and the selected event per thread. */
export class CompareView extends PanelView {
  private data: DiffResponse | null = null;
  private threads: DiffThreadsResponse | null = null;
  private head: HTMLDivElement;
  private scroll: HTMLDivElement;
  private bars: echarts.ECharts;
  private heat: echarts.ECharts;
  private matrix: DiffMatrixResponse | null = null;
  private tree: DiffTreeResponse | null = null;
  private open = new Set<number>();

  constructor(panel: Panel) {
    super(panel);
    const runs = this.ctx.run.compared.map((c, i) => ({ value: i + 1, label: `${i + 1}: ${shorten(c.path.split('/').filter(Boolean).slice(-2).join('/'), 40)}` }));
    this.tools.append(dynamicSelect('cmp', runs), selectFor('cmpview'), selectFor('cmpnorm'), selectFor('dsort'), selectFor('dshow'));
    this.head = this.div();
    Object.assign(this.head.style, { position: 'absolute', top: '0', left: '0', right: '0' });
    const split = document.createElement('div');
    split.className = 'split compare-split';
    split.style.top = '40px';
    this.scroll = document.createElement('div');
    this.scroll.className = 'scroll';
    const right = document.createElement('div');
    right.className = 'compare-right';
    const top = document.createElement('div');
    const bottom = document.createElement('div');
    right.append(top, bottom);
    split.append(this.scroll, right);
    this.body.appendChild(split);
    this.heat = this.chart('compare-heatmap', top);
    this.bars = this.chart('compare-threads', bottom);
    this.heat.on('click', (p) => {
      const [x, y] = (p as unknown as { value: [number, number, number] }).value;
      const m = this.matrix;
      if (!m) return;
      const row = m.rows[m.rows.length - 1 - y];
      const col = m.columns[x];
      store.set(col && col[0] === col[1] ? { event: row.event, thread: col[0] } : { event: row.event });
    });
    this.bars.on('click', (p) => {
      const t = this.threads?.threads[(p as { dataIndex: number }).dataIndex]?.thread;
      if (t) store.set({ thread: t });
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    let fresh = false;
    if (touched(changed, 'cmp', 'metric', 'kind', 'cmpnorm', 'callpaths', 'dsort')) {
      const d = await this.load((signal) => api.diff(s, ROWS, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      fresh = true;
    }
    if (touched(changed, 'cmp', 'metric', 'cmpnorm', 'cmpview') && s.cmpview === 'tree') {
      const t = await this.load((signal) => api.diffTree(s, signal), 'tree');
      if (t === SUPERSEDED) return;
      this.tree = t;
      this.open = initiallyOpen(t);
      fresh = true;
    }
    // After each wait the selection may have moved on: every step draws what is selected now.
    if (fresh || touched(changed, 'event', 'cmpview')) this.renderTable(this.state());
    if (touched(changed, 'cmp', 'metric', 'kind', 'callpaths', 'dshow')) await this.loadMatrix(this.state());
    else if (touched(changed, 'event')) this.drawMatrix(this.state());
    if (fresh || touched(changed, 'cmp', 'metric', 'kind', 'event')) await this.loadThreads(this.state());
    else if (touched(changed, 'thread', 'dshow')) this.drawThreads(this.state());
  }

  /** The call-tree mode: the two trees as one; ▸ opens a node, a click selects its event. */
  private renderTree(s: State): void {
    const t = this.tree;
    if (!t) return;
    renderDiffTree(this.scroll, t, this.open, s.event);
    this.scroll.querySelectorAll<HTMLTableRowElement>('tbody tr').forEach((tr) =>
      tr.addEventListener('click', (ev) => {
        const node = Number(tr.dataset.node);
        if ((ev.target as HTMLElement).classList.contains('toggle')) {
          if (this.open.has(node)) this.open.delete(node);
          else this.open.add(node);
          this.renderTree(this.state());
        } else if (tr.dataset.id) store.set({ event: Number(tr.dataset.id) });
      }),
    );
    revealIn(this.scroll, this.scroll.querySelector<HTMLElement>('tr.selected'));
  }

  private async loadMatrix(s: State): Promise<void> {
    const w = Math.max(16, this.heat.getWidth() - 200);
    const m = await this.load((signal) => api.diffMatrix(s, 30, w, signal), 'matrix');
    if (m === SUPERSEDED) return;
    this.matrix = m;
    this.drawMatrix(this.state());
  }

  /** The diff heat map: events (largest |B − A| on top) × bins of the threads both runs have. */
  private drawMatrix(s: State): void {
    const m = this.matrix;
    if (!m) return;
    const cols = m.columns.length;
    const n = m.rows.length;
    const asRatio = m.show === 'log_ratio';
    const fmt = (v: number) => (asRatio ? ratio(2 ** v) : signed(v, m.unit));
    const data: [number, number, number][] = [];
    m.cells.forEach((v, i) => {
      if (v !== null) data.push([i % cols, n - 1 - Math.floor(i / cols), v]);
    });
    const extent = Math.max(m.extent, 1e-12);
    const selRow = m.rows.findIndex((r) => r.event === s.event);
    this.heat.setOption(
      {
        animation: false,
        title: { text: `${asRatio ? 'B / A' : 'B − A'}: events × ${m.threads.toLocaleString('en-US')} threads in both runs`, left: 8, top: 0, textStyle: { fontSize: 11, fontWeight: 'normal' } },
        grid: { left: 170, right: 90, top: 22, bottom: 18 },
        tooltip: {
          formatter: (p: unknown) => {
            const [x, y, v] = (p as { value: [number, number, number] }).value;
            const c = m.columns[x];
            return `${esc(m.rows[n - 1 - y].name)}<br/>threads ${esc(c[0])}${c[0] === c[1] ? '' : `–${esc(c[1])}`}<br/><b>${fmt(v)}</b>${c[0] === c[1] ? '' : ' (largest in the bin)'}`;
          },
        },
        xAxis: { type: 'category', data: m.columns.map((c) => c[0]), axisLabel: { show: false }, axisTick: { show: false } },
        yAxis: {
          type: 'category',
          data: m.rows.map((r) => shorten(r.name, 26)).reverse(),
          axisLabel: { fontSize: 9, interval: n > 20 ? 'auto' : 0, color: (_: unknown, i: number) => (n - 1 - i === selRow ? '#b45309' : '#374151') },
        },
        visualMap: {
          type: 'continuous',
          min: -extent,
          max: extent,
          orient: 'vertical',
          right: 4,
          top: 'middle',
          itemHeight: 120,
          calculable: false,
          inRange: { color: DIVERGING },
          formatter: fmt,
          text: [fmt(extent), fmt(-extent)],
          textStyle: { fontSize: 10 },
        },
        series: [{ type: 'heatmap', data, progressive: 0 }],
      },
      true,
    );
  }

  /** Both runs' value on every thread, side by side (threads in the order of B − A). */
  private drawSideBySide(s: State, t: DiffThreadsResponse): void {
    const u = t.unit;
    const sel = s.thread ? t.threads.findIndex((x) => x.thread === s.thread) : -1;
    this.bars.setOption(
      {
        animation: false,
        title: { text: `${shorten(t.name, 56)}: A and B per thread`, left: 8, top: 0, textStyle: { fontSize: 11, fontWeight: 'normal' } },
        legend: { data: ['A', 'B'], top: 0, right: 8, textStyle: { fontSize: 10 } },
        grid: { left: 72, right: 16, top: 28, bottom: 40 },
        tooltip: { trigger: 'axis' },
        xAxis: {
          type: 'category',
          data: t.threads.map((x) => x.thread),
          name: 'threads, largest increase first',
          nameLocation: 'middle',
          nameGap: 8,
          axisLabel: { show: false },
          axisPointer: { value: sel >= 0 ? t.threads[sel].thread : undefined },
        },
        yAxis: { type: 'value', axisLabel: { formatter: (v: number) => value(v, u), fontSize: 10 } },
        series: [
          { name: 'A', type: 'bar', data: t.threads.map((x) => x.a), itemStyle: { color: '#64748b' }, large: t.threads.length > 2000 },
          { name: 'B', type: 'bar', data: t.threads.map((x) => x.b), itemStyle: { color: '#c2410c' }, large: t.threads.length > 2000 },
        ],
      },
      true,
    );
  }

  private async loadThreads(s: State): Promise<void> {
    const event = s.event;
    if (event === null || !this.data?.rows.some((r) => r.event_a === event && r.event_b !== null)) {
      this.cancel('threads');
      this.threads = null;
      this.bars.clear();
      const text = event === null ? 'select an event' : 'the selected event is not in both runs';
      this.bars.setOption({ title: { text, left: 'center', top: 'middle', textStyle: { fontSize: 12, color: '#6b7280' } } });
      return;
    }
    const t = await this.load((signal) => api.diffThreads(s, event, signal), 'threads');
    if (t === SUPERSEDED) return;
    this.threads = t;
    this.drawThreads(this.state());
  }

  private renderTable(s: State): void {
    const d = this.data;
    if (!d) return;
    if (s.cmpview === 'tree' && this.tree) {
      this.renderTree(s);
      return;
    }
    const c = this.ctx.run.compared[s.cmp - 1];
    const u = d.unit;
    const total = d.totals[0] !== null && d.totals[1] !== null ? ` · run total A ${value(d.totals[0], u)}, B ${value(d.totals[1], u)} (${signed(d.totals[1] - d.totals[0], u)})` : '';
    this.head.innerHTML = `A = <b>this run</b> (${d.threads[0].toLocaleString('en-US')} threads) vs B = <b title="${esc(c?.path ?? '')}">${esc(shorten(c?.path ?? '', 60))}</b> (${d.threads[1].toLocaleString('en-US')} threads) — ${d.kind} ${esc(d.metric_name)}, ${d.normalize === 'per_thread' ? 'per thread' : 'total over threads'}${total}<br><small>${d.counts[0]} events in both, <b class="added">${d.counts[1]} added</b>, <b class="removed">${d.counts[2]} removed</b> (flat and callpath)${d.rows_total > d.rows.length ? ` · first ${d.rows.length} of ${d.rows_total} rows` : ''}</small>`;
    const max = Math.max(0, ...d.rows.map((r) => Math.abs(r.delta)));
    const arrow = (col: Col) => (col.key === 'delta' && s.dsort === 'abs_delta' ? ' |▼|' : col.key !== 'pct' && col.sort === s.dsort ? ' ▼' : '');
    const head = COLS.map((col) => `<th class="${col.key === 'name' || col.key === 'change' ? '' : 'num'}" data-key="${col.key}"${col.sort ? ' title="sort (largest first)"' : ''}>${col.label}${arrow(col)}</th>`).join('');
    const body = d.rows
      .map(
        (r) =>
          `<tr data-id="${r.event_a ?? ''}" class="${r.event_a !== null && r.event_a === s.event ? 'selected' : ''}" title="${esc(r.name)}">${COLS.map(
            (col) => `<td class="${col.key === 'name' ? 'name' : col.key === 'change' ? '' : 'num'}">${col.show(r, u, max)}</td>`,
          ).join('')}</tr>`,
      )
      .join('');
    this.scroll.innerHTML = `<table class="data diff"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
    this.scroll.querySelectorAll<HTMLElement>('.dbar[data-w]').forEach((b) => (b.style.width = `${b.dataset.w}px`));
    this.scroll.querySelectorAll<HTMLElement>('th').forEach((th) =>
      th.addEventListener('click', () => {
        const col = COLS.find((x) => x.key === th.dataset.key);
        if (!col?.sort) return;
        // B − A: |B − A| first, then signed (regressions on top).
        const next: DiffSort = col.key === 'delta' ? (s.dsort === 'abs_delta' ? 'delta' : 'abs_delta') : col.sort;
        store.set({ dsort: next });
      }),
    );
    this.scroll.querySelectorAll<HTMLTableRowElement>('tbody tr').forEach((tr) =>
      tr.addEventListener('click', () => {
        if (tr.dataset.id) store.set({ event: Number(tr.dataset.id) });
      }),
    );
    revealIn(this.scroll, this.scroll.querySelector<HTMLElement>('tr.selected'));
  }

  private drawThreads(s: State): void {
    const t = this.threads;
    if (!t) return;
    if (s.dshow === 'both') {
      this.drawSideBySide(s, t);
      return;
    }
    const u = t.unit;
    const asRatio = s.dshow === 'ratio';
    // B / A is drawn on a log scale centred on 1 (a halving and a doubling equally far).
    const shown = t.threads.map((x) => (asRatio ? (x.a && x.b !== null ? Math.log2(x.b / x.a) : null) : x.delta));
    const extent = Math.max(1e-12, ...shown.map((v) => Math.abs(v ?? 0)));
    const sel = s.thread ? t.threads.findIndex((x) => x.thread === s.thread) : -1;
    const fmt = (v: number) => (asRatio ? ratio(2 ** v) : signed(v, u));
    this.bars.setOption(
      {
        animation: false,
        title: {
          text: `${shorten(t.name, 56)}: ${asRatio ? 'B / A' : 'B − A'} per thread`,
          subtext: t.same_threads ? '' : 'threads in one run only: the other run counts 0',
          left: 8,
          top: 0,
          textStyle: { fontSize: 11, fontWeight: 'normal' },
          subtextStyle: { fontSize: 10 },
          itemGap: 5,
        },
        grid: { left: 72, right: 16, top: t.same_threads ? 28 : 46, bottom: 70 },
        tooltip: {
          trigger: 'axis',
          formatter: (p: unknown) => {
            const x = t.threads[(p as { dataIndex: number }[])[0].dataIndex];
            return `${esc(threadName(x.thread))}<br/>A ${x.a === null ? '–' : value(x.a, u)} · B ${x.b === null ? '–' : value(x.b, u)}<br/><b>${signed(x.delta, u)}</b>${x.a ? ` (${ratio((x.b ?? 0) / x.a)})` : ''}`;
          },
        },
        xAxis: { type: 'category', data: t.threads.map((x) => x.thread), name: 'threads, largest increase first', nameLocation: 'middle', nameGap: 8, axisLabel: { show: false } },
        yAxis: { type: 'value', axisLabel: { formatter: fmt, fontSize: 10 } },
        visualMap: {
          type: 'continuous',
          min: -extent,
          max: extent,
          dimension: 1,
          seriesIndex: 0,
          orient: 'horizontal',
          left: 'center',
          bottom: 4,
          itemHeight: 160,
          calculable: false,
          inRange: { color: DIVERGING },
          formatter: fmt,
          // The ends of the legend, with their values (the scale is symmetric about no change).
          text: [`${fmt(extent)} ${asRatio ? 'B larger' : 'increase'}`, `${fmt(-extent)} ${asRatio ? 'B smaller' : 'decrease'}`],
          textStyle: { fontSize: 10 },
        },
        series: [
          {
            type: 'bar',
            barCategoryGap: '10%',
            data: shown.map((v, i) => ({ value: v, itemStyle: i === sel ? { borderColor: '#111', borderWidth: 2 } : undefined })),
            large: shown.length > 2000,
          },
        ],
      },
      true,
    );
  }
}

// Communication matrix of a TAU_COMM_MATRIX run: sender ranks (rows) × receiver ranks (columns)
// of one path (All Paths or a callpath element) and one statistic (bytes, calls, mean/max/min
// message size), reduced by the server to the panel's pixels (max or sum of a bin's cells).
// Wheel zooms, drag pans, a click on a single-rank cell selects the sender's thread (the shared
// selection); a click on a bin of several ranks zooms into it.

import type * as echarts from 'echarts';
import type { CommResponse } from '../api/CommResponse';
import type { CommStat } from '../api/CommStat';
import { api } from '../client';
import { compact, esc, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { HOT, labelInterval, linear, logarithmic, verticalLegend } from './colourscale';

const GRID = { left: 70, right: 104, top: 10, bottom: 70 };

const STATS: [CommStat, string][] = [
  ['bytes', 'bytes sent'],
  ['calls', 'messages'],
  ['mean_bytes', 'mean size'],
  ['max_bytes', 'max size'],
  ['min_bytes', 'min size'],
  ['stddev_bytes', 'std. dev. of size'],
];

interface Region {
  r0: number;
  r1: number;
  c0: number;
  c1: number;
}

/** The ranks × ranks communication matrix. */
export class CommView extends PanelView {
  private map: echarts.ECharts;
  private data: CommResponse | null = null;
  private info: HTMLDivElement;
  private pathSel: HTMLSelectElement;
  private statSel: HTMLSelectElement;
  private reduceSel: HTMLSelectElement;
  private region: Region | null = null;
  private ranks = 0;
  private dragFrom: { x: number; y: number } | null = null;
  private legend: object[] = [];

  constructor(panel: Panel) {
    super(panel);
    this.map = this.chart('comm');
    this.info = this.div('note status');
    const select = (title: string, options: [string, string][]) => {
      const el = document.createElement('select');
      el.title = title;
      for (const [v, label] of options) el.add(new Option(label, v));
      el.addEventListener('change', () => this.fetch(this.state()));
      return el;
    };
    this.pathSel = select('path: the messages sent beneath this callpath element, or all', [['All Paths', 'All Paths']]);
    this.pathSel.className = 'comm-path';
    this.statSel = select('what a cell shows', STATS);
    this.statSel.className = 'comm-stat';
    this.reduceSel = select('how a bin of several ranks combines its cells', [
      ['max', 'max'],
      ['sum', 'sum'],
    ]);
    const reset = document.createElement('button');
    reset.textContent = 'all';
    reset.title = 'show every rank';
    reset.addEventListener('click', () => {
      this.region = null;
      this.fetch(this.state());
    });
    this.tools.append(this.pathSel, this.statSel, this.reduceSel, reset);
    this.map.on('click', (p) => this.onClick(p as unknown as { data: number[] }));
    const zr = this.map.getZr();
    zr.on('mousewheel', (e) => this.onWheel(e as unknown as { offsetX: number; offsetY: number; wheelDelta: number; event: Event }));
    zr.on('mousedown', (e) => {
      this.dragFrom = { x: e.offsetX, y: e.offsetY };
    });
    zr.on('mouseup', (e) => this.onDragEnd(e.offsetX, e.offsetY));
  }

  protected onResize(): void {
    this.fetch(this.state());
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (this.data === null || touched(changed, 'sample', 'mode')) await this.fetch(s);
    else if (touched(changed, 'thread')) this.draw(s);
  }

  private async fetch(s: State): Promise<void> {
    const stat = this.statSel.value as CommStat;
    // Sum only fits bytes and calls.
    const adds = stat === 'bytes' || stat === 'calls';
    if (!adds) this.reduceSel.value = 'max';
    this.reduceSel.disabled = !adds;
    const reduce = this.reduceSel.value as 'max' | 'sum';
    const { width, height } = this.body.getBoundingClientRect();
    const h = Math.max(1, Math.floor((height - GRID.top - GRID.bottom) / 3));
    const w = Math.max(1, Math.floor((width - GRID.left - GRID.right) / 3));
    const r = this.region;
    const d = await this.load((signal) =>
      api.comm(s, { path: this.pathSel.value, stat, reduce, h, w, ...(r ? { r0: r.r0, r1: r.r1, c0: r.c0, c1: r.c1 } : {}) }, signal),
    );
    if (d === SUPERSEDED) return;
    this.data = d;
    this.ranks = d.ranks;
    if (this.pathSel.options.length !== d.paths.length) {
      const keep = this.pathSel.value;
      this.pathSel.innerHTML = '';
      for (const p of d.paths) this.pathSel.add(new Option(`${p.name} (${value(p.bytes, 'B')})`, p.name));
      this.pathSel.value = keep;
    }
    const rows = d.rows;
    const cols = d.cols;
    if (rows.length && cols.length) this.region = { r0: rows[0].first, r1: rows[rows.length - 1].last + 1, c0: cols[0].first, c1: cols[cols.length - 1].last + 1 };
    this.draw(this.state());
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const nr = d.rows.length;
    const nc = d.cols.length;
    const unit = d.stat === 'calls' ? 'count' : 'B';
    const max = d.max ?? 1;
    const floor = d.min !== null && d.min > 0 ? d.min : max / 1e3;
    // Bytes span decades: a log scale when the window's values do.
    const scale = max > 0 && max / floor > 100 ? logarithmic(floor, max) : linear(Math.min(0, d.min ?? 0), max);
    const cells: number[][] = [];
    for (let r = 0; r < nr; r++) {
      for (let c = 0; c < nc; c++) {
        const v = d.values[r * nc + c];
        if (v === null || v === undefined) continue;
        cells.push([c, r, scale.map(v), v]);
      }
    }
    const { width, height } = this.body.getBoundingClientRect();
    const gridH = height - GRID.top - GRID.bottom;
    const cellW = (width - GRID.left - GRID.right) / Math.max(1, nc);
    const cellH = gridH / Math.max(1, nr);
    const statName = STATS.find(([k]) => k === d.stat)?.[1] ?? d.stat;
    this.legend = verticalLegend({
      x: width - GRID.right + 14,
      y: GRID.top,
      h: Math.max(40, Math.min(220, gridH - 90)),
      sc: scale,
      label: (v: number) => value(v, unit),
      heading: [statName, scale.log ? 'log scale' : 'linear'],
      blank: ['blank: no', 'message'],
    });
    const option: echarts.EChartsOption = {
      animation: false,
      grid: { ...GRID },
      tooltip: {
        position: 'top',
        formatter: (p: unknown) => {
          const [c, r, , v] = (p as { data: number[] }).data;
          return `${esc(d.rows[r].label)} → ${esc(d.cols[c].label)}<br/><b>${value(v, unit)}</b> ${esc(statName)} (${d.reduce} of bin)<br/>${esc(d.path)}`;
        },
      },
      xAxis: {
        type: 'category',
        data: d.cols.map((b) => (b.first === b.last ? String(b.first) : `${b.first}–${b.last}`)),
        name: `receiver ranks ${d.cols[0]?.first ?? 0}–${d.cols[nc - 1]?.last ?? 0} of ${d.ranks}`,
        nameLocation: 'middle',
        nameGap: 22,
        axisLabel: { hideOverlap: true, fontSize: 10 },
      },
      yAxis: {
        type: 'category',
        inverse: true,
        data: d.rows.map((b) => (b.first === b.last ? String(b.first) : `${b.first}–${b.last}`)),
        name: 'sender',
        // One label per 12 px at most.
        axisLabel: { interval: labelInterval(nr, gridH), fontSize: 10 },
        axisTick: { interval: labelInterval(nr, gridH) },
      },
      visualMap: { show: false, min: scale.vmin, max: scale.vmax, calculable: false, dimension: 2, inRange: { color: HOT } },
      series: [
        {
          type: 'heatmap',
          data: cells,
          progressive: 0,
          emphasis: { itemStyle: { borderColor: '#111', borderWidth: 1 } },
          label: { show: cellW >= 38 && cellH >= 13, fontSize: 9, formatter: (p: unknown) => compact((p as { data: number[] }).data[3], unit) },
        },
      ],
    };
    this.map.setOption(option, true);
    // The selected thread's rank as a sender: its row outlined.
    const rank = s.thread === null ? null : Number(s.thread.split('.')[0]);
    const row = rank === null ? -1 : d.rows.findIndex((b) => rank >= b.first && rank <= b.last);
    const shapes: object[] = [];
    if (row >= 0) {
      const y = (this.map.convertToPixel({ yAxisIndex: 0 }, row) as unknown as number) - cellH / 2;
      shapes.push({ type: 'rect', silent: true, z: 100, shape: { x: GRID.left, y, width: width - GRID.left - GRID.right, height: cellH }, style: { fill: 'none', stroke: '#111', lineWidth: 2 } });
    }
    this.map.setOption({ graphic: [...shapes, ...this.legend] as never }, { replaceMerge: ['graphic'] });
    const total = d.paths.find((p) => p.name === d.path);
    this.info.textContent = `${d.path}: ${total ? `${value(total.bytes, 'B')} in ${total.calls.toLocaleString('en-US')} messages over ${total.pairs} pairs` : ''} · senders in ${nr} bins × receivers in ${nc} bins · ${d.reduce}${d.out_of_range_rows > 0 ? ` · ${d.out_of_range_rows} events name ranks not in the run (left out)` : ''} · wheel: zoom, drag: pan, click: select the sender`;
  }

  private onClick(p: { data: number[] }): void {
    const d = this.data;
    if (!d || !p.data) return;
    const [c, r] = p.data;
    const rb = d.rows[r];
    const cb = d.cols[c];
    if (rb.first === rb.last) {
      store.set({ thread: rb.thread ?? `${rb.first}.0.0` });
    } else {
      this.region = { r0: rb.first, r1: rb.last + 1, c0: cb.first, c1: cb.last + 1 };
      this.fetch(this.state());
    }
  }

  private pixelToRank(x: number, y: number): { row: number; col: number } | null {
    const d = this.data;
    if (!d) return null;
    const pt = this.map.convertFromPixel({ gridIndex: 0 }, [x, y]) as number[] | undefined;
    if (!pt) return null;
    const c = Math.max(0, Math.min(d.cols.length - 1, Math.round(pt[0])));
    const r = Math.max(0, Math.min(d.rows.length - 1, Math.round(pt[1])));
    return { row: d.rows[r].first, col: d.cols[c].first };
  }

  private onWheel(e: { offsetX: number; offsetY: number; wheelDelta: number; event: Event }): void {
    e.event?.preventDefault?.();
    const at = this.pixelToRank(e.offsetX, e.offsetY);
    const reg = this.region;
    if (!at || !reg) return;
    const f = e.wheelDelta > 0 ? 0.7 : 1 / 0.7;
    const n = this.ranks;
    const zoom = (a: number, b: number, p: number) => {
      const size = Math.max(1, Math.min(n, Math.round((b - a) * f)));
      const start = Math.max(0, Math.min(n - size, Math.round(p - ((p - a) / (b - a)) * size)));
      return [start, start + size];
    };
    const [r0, r1] = zoom(reg.r0, reg.r1, at.row);
    const [c0, c1] = zoom(reg.c0, reg.c1, at.col);
    this.region = { r0, r1, c0, c1 };
    this.fetch(this.state());
  }

  private onDragEnd(x: number, y: number): void {
    const from = this.dragFrom;
    this.dragFrom = null;
    const reg = this.region;
    if (!from || !reg || Math.hypot(x - from.x, y - from.y) < 6) return;
    const a = this.pixelToRank(from.x, from.y);
    const b = this.pixelToRank(x, y);
    if (!a || !b) return;
    const n = this.ranks;
    const clamp = (s: number, size: number) => Math.max(0, Math.min(n - size, s));
    const r0 = clamp(reg.r0 + a.row - b.row, reg.r1 - reg.r0);
    const c0 = clamp(reg.c0 + a.col - b.col, reg.c1 - reg.c0);
    this.region = { r0, r1: r0 + (reg.r1 - reg.r0), c0, c1: c0 + (reg.c1 - reg.c0) };
    this.fetch(this.state());
  }
}

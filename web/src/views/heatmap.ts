// Heat map: rows (events or source lines) × threads, coloured by the selected metric and kind,
// normalized per event or over the whole run. The server reduces the region to screen
// resolution (MAX keeps hot spots); numbers are overlaid when cells are large enough.
// Wheel zooms, drag pans, a click on a cell selects its event and thread (or zooms into a bin).
// The colour range is the window's or the whole run's (`crange`), linear or log (`cscale`); the
// legend and the status line say which, with values in the metric's unit.

import type * as echarts from 'echarts';
import type { MatrixResponse } from '../api/MatrixResponse';
import { api } from '../client';
import { numberFor, selectFor } from '../controls';
import { compact, esc, percent, threadName, threadTick, threadsNoun, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';
import { HOT, type Scale, elideStart, labelInterval, linear, logarithmic, ticks, verticalLegend } from './colourscale';

export { HOT } from './colourscale';

/** Grid margins of the heat map (px): the row labels at the left, the legend at the right. */
const GRID = { left: 210, right: 104, top: 10, bottom: 72 };
/** Characters of a row label (elided from its start beyond). */
const LABEL_CHARS = 36;

interface Region {
  r0: number;
  r1: number;
  t0: number;
  t1: number;
}

/** Rows × threads coloured by value, zoomable, at screen resolution. */
export class HeatmapView extends PanelView {
  private map: echarts.ECharts;
  private data: MatrixResponse | null = null;
  private region: Region = { r0: 0, r1: 0, t0: 0, t1: 0 };
  private rowCount = 0;
  /** Length of the thread axis of the last answer (all threads, or a subset). */
  private axisLen: number;
  private clusterNote = '';
  private dragFrom: { x: number; y: number } | null = null;
  private info: HTMLDivElement;
  /** The legend's graphic elements of the last draw. */
  private legend: object[] = [];

  constructor(panel: Panel) {
    super(panel);
    this.map = this.chart('heatmap');
    this.info = this.div('note status');
    this.axisLen = this.ctx.run.threads;
    const reset = document.createElement('button');
    reset.textContent = 'all';
    reset.title = 'show the whole run';
    reset.addEventListener('click', () => store.set({ r0: null, r1: null, t0: null, t1: null }));
    // A new thread axis shows all of it; representatives need clusters.
    const newAxis = (): Partial<State> => ({ t0: null, t1: null });
    this.tools.append(
      selectFor('threads', { owner: this, also: (v, s) => ({ ...newAxis(), ...(v !== 'cluster' && s.subset === 'reps' ? { subset: 'all' } : {}) }) }),
      numberFor('clusters', { owner: this, also: newAxis, visible: (s) => s.threads === 'cluster' }),
      selectFor('subset', { owner: this, also: newAxis, disabled: (v, s) => v === 'reps' && s.threads !== 'cluster' }),
      numberFor('top', { owner: this, also: newAxis, visible: (s) => s.subset === 'top' }),
      selectFor('norm', { owner: this }),
      selectFor('crange', { owner: this }),
      selectFor('cscale', { owner: this }),
      reset,
    );
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

  private currentRegion(s: State, rowCount: number, threads: number): Region {
    const r0 = Math.max(0, Math.min(s.r0 ?? 0, rowCount));
    const r1 = Math.max(r0 + 1, Math.min(s.r1 ?? rowCount, rowCount));
    const t0 = Math.max(0, Math.min(s.t0 ?? 0, threads));
    const t1 = Math.max(t0 + 1, Math.min(s.t1 ?? threads, threads));
    return { r0, r1, t0, t1 };
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const event = s.event;
    let moved = false;
    if (touched(changed, 'event') && event !== null) {
      // Bring the selected event's row into view (the store's notification then fetches).
      const at = await this.load(async () => ({ n: (await this.ctx.rows(s)).rows.length, pos: await this.ctx.rowOf(s, event) }), 'reveal');
      const reg = at === SUPERSEDED ? null : this.currentRegion(s, at.n, this.axisLen);
      if (at !== SUPERSEDED && reg && at.pos !== undefined && (at.pos < reg.r0 || at.pos >= reg.r1)) {
        const size = reg.r1 - reg.r0;
        const r0 = Math.max(0, Math.min(at.pos - Math.floor(size / 2), at.n - size));
        store.set({ r0, r1: r0 + size });
        moved = true;
      }
    }
    if (axisChanged(s, changed)) await this.fetchClusters(s);
    if (moved) return;
    if (touched(changed, 'metric', 'kind', 'rows', 'callpaths', 'reduce', 'r0', 'r1', 't0', 't1', 'norm', 'crange', 'thread') || axisChanged(s, changed)) {
      // (the answer also gives the selected thread's position on the axis)
      await this.fetch(s);
    } else if (touched(changed, 'event', 'cscale')) {
      this.draw(this.state());
    }
  }

  private async fetchClusters(s: State): Promise<void> {
    if (s.threads !== 'cluster') {
      this.cancel('clusters');
      this.clusterNote = '';
      return;
    }
    const t = await this.load((signal) => api.threads(s, signal), 'clusters');
    if (t === SUPERSEDED) return;
    const sizes = t.clusters.map((c) => c.size.toLocaleString('en-US'));
    this.clusterNote = ` · ${t.clusters.length} clusters of ${sizes.join(', ')} threads`;
  }

  private async fetch(s: State): Promise<void> {
    const got = await this.load(async (signal) => {
      const rows = await this.ctx.rows(s);
      if (rows.rows.length === 0) return { rowCount: 0, region: this.region, data: null };
      const region = this.currentRegion(s, rows.rows.length, this.axisLen);
      const { width, height } = this.body.getBoundingClientRect();
      const rowsFit = Math.floor((height - 60) / 3);
      const colsFit = Math.floor((width - 200) / 3);
      const h = Math.max(1, Math.min(region.r1 - region.r0, rowsFit));
      const w = Math.max(1, Math.min(region.t1 - region.t0, colsFit));
      // The whole run at the resolution the un-zoomed heat map has (its colour range).
      const whole = s.crange === 'run' ? { wh: Math.max(1, Math.min(rows.rows.length, rowsFit)), ww: Math.max(1, Math.min(this.axisLen, colsFit)) } : {};
      return { rowCount: rows.rows.length, region, data: await api.matrix(s, { ...region, h, w, ...whole }, signal) };
    });
    if (got === SUPERSEDED) return;
    this.rowCount = got.rowCount;
    if (!got.data) {
      this.data = null;
      this.map.clear();
      this.info.textContent = s.rows === 'lines' ? 'no sampled source lines in this run' : 'no events';
      return;
    }
    this.data = got.data;
    this.region = got.region;
    if (got.data.thread_count !== this.axisLen) {
      // The axis changed length (a subset): show all of it.
      this.axisLen = got.data.thread_count;
      this.region = this.currentRegion({ ...s, t0: null, t1: null }, this.rowCount, this.axisLen);
    }
    this.draw(this.state());
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const nr = d.rows.length;
    const nc = d.cols.length;
    const unit = d.unit;
    const selRows: number[] = [];
    d.rows.forEach((b, i) => {
      if (s.event !== null && b.event === s.event) selRows.push(i);
    });
    const colour = this.colourScale(s, d, selRows);
    const cells: (number | string)[][] = [];
    for (let r = 0; r < nr; r++) {
      for (let c = 0; c < nc; c++) {
        const v = d.values[r * nc + c];
        if (v === null || v === undefined) continue;
        cells.push([c, r, colour.scale.map(colour.shown(r, v)), v]);
      }
    }
    const { width, height } = this.body.getBoundingClientRect();
    const gridH = height - GRID.top - GRID.bottom;
    const cellW = (width - GRID.left - GRID.right) / Math.max(1, nc);
    const cellH = gridH / Math.max(1, nr);
    const showNumbers = cellW >= 38 && cellH >= 13;
    this.legend = verticalLegend({
      x: width - GRID.right + 14,
      y: GRID.top,
      h: Math.max(40, Math.min(220, gridH - 90)),
      sc: colour.scale,
      values: colour.values,
      label: colour.label,
      heading: colour.heading,
      blank: ['blank: event', 'absent on', 'that thread'],
    });
    const tpos = d.thread_position;
    const selCol = tpos === null ? -1 : d.cols.findIndex((b) => tpos >= b.first && tpos <= b.last);
    // Cluster starts as fractional column positions (a start may fall inside a bin).
    const clusterCols = d.cluster_starts
      .filter((p) => p > d.cols[0]?.first)
      .map((p) => {
        const c = d.cols.findIndex((b) => p >= b.first && p <= b.last);
        return c < 0 ? -1 : c + (p - d.cols[c].first) / (d.cols[c].last - d.cols[c].first + 1);
      })
      .filter((c) => c > 0);
    const option: echarts.EChartsOption = {
      animation: false,
      grid: { ...GRID },
      tooltip: {
        position: 'top',
        formatter: (p: unknown) => {
          const q = p as { data: number[] };
          const [c, r, , v] = q.data;
          return `${esc(d.rows[r].label)}<br/>${esc(threadName(d.cols[c].label))}<br/><b>${value(v, unit)}</b> (${d.reduce} of bin)`;
        },
      },
      xAxis: {
        type: 'category',
        data: d.cols.map((b) => b.label),
        name: `${threadsNoun()} ${this.region.t0}–${this.region.t1 - 1} of ${d.thread_count} (${d.thread_order})`,
        nameLocation: 'middle',
        nameGap: 24,
        // `12` (or `rank 12, thread 3`), not the `12.0.0` of the API.
        axisLabel: { hideOverlap: true, fontSize: 10, formatter: (l: string) => threadTick(l) },
        splitArea: { show: false },
      },
      yAxis: {
        type: 'category',
        inverse: true,
        data: d.rows.map((b) => b.label),
        // As many labels as fit (one per 12 px), long callpaths cut from their start (the
        // leaf stays); the full name is in the tooltip.
        axisLabel: { interval: labelInterval(nr, gridH), fontSize: 10, hideOverlap: true, formatter: (l: string) => elideStart(l, LABEL_CHARS) },
        axisTick: { interval: labelInterval(nr, gridH) },
      },
      // The mapping only: the legend is drawn with its values (verticalLegend).
      visualMap: {
        show: false,
        min: colour.scale.vmin,
        max: colour.scale.vmax,
        calculable: false,
        dimension: 2,
        inRange: { color: HOT },
      },
      series: [
        {
          type: 'heatmap',
          data: cells,
          progressive: 0,
          emphasis: { itemStyle: { borderColor: '#111', borderWidth: 1 } },
          label: {
            show: showNumbers,
            fontSize: 9,
            formatter: (p: unknown) => compact((p as { data: number[] }).data[3], unit),
          },
        },
      ],
    };
    this.map.setOption(option, true);
    this.overlay(selRows, selCol, nr, nc, clusterCols);
    this.info.textContent = `${colour.note} · rows ${this.region.r0}–${this.region.r1 - 1} of ${d.row_count} in ${nr} bins × threads in ${nc} bins of ${2 ** d.level} · ${d.reduce}${this.clusterNote} · wheel: zoom, drag: pan, click: select`;
    this.info.title = `${colour.note}. Blank cells: the event is absent on that thread (no value); 0 takes the coldest colour.`;
  }

  /** The colours in force: what a cell shows (its value, or its share of its row's largest),
   * the scale over that, the legend's labels and heading, and the sentence saying which. */
  private colourScale(
    s: State,
    d: MatrixResponse,
    selRows: number[],
  ): { shown: (r: number, v: number) => number; scale: Scale; values?: number[]; label: (v: number) => string; heading: string[]; note: string } {
    const nr = d.rows.length;
    const nc = d.cols.length;
    const whole = s.crange === 'run' && d.run !== null;
    const range = whole ? 'whole run' : 'this window';
    const log = s.cscale === 'log';
    const unit = d.unit;
    if (s.norm === 'event') {
      // Each row over its largest cell: of the window, or of the whole thread axis.
      const den = new Array<number>(nr).fill(0);
      for (let r = 0; r < nr; r++) {
        if (whole) den[r] = d.run?.row_max[r] ?? 0;
        else for (let c = 0; c < nc; c++) den[r] = Math.max(den[r], d.values[r * nc + c] ?? 0);
      }
      const shown = (r: number, v: number) => (den[r] > 0 ? Math.min(1, Math.max(0, v / den[r])) : 0);
      const scale = log ? logarithmic(1e-3, 1) : linear(0, 1);
      const sel = selRows.length === 1 && den[selRows[0]] > 0 ? selRows[0] : null;
      const kind = log ? ', log' : '';
      if (sel !== null) {
        // The selected event's own values.
        const max = den[sel];
        const name = d.rows[sel].label;
        // Ticks at round values of the event's own range (as fractions of its max).
        const own = log ? logarithmic(max * 1e-3, max) : linear(0, max);
        return {
          shown,
          scale,
          values: ticks(own, 4).map((v) => v / max),
          label: (f) => value(f * max, unit),
          heading: ['per event', range, elideStart(name, 16)],
          note: `colour per event (${range}${kind}): each row 0 – its max; ${name}: 0 – ${value(max, unit)}`,
        };
      }
      return {
        shown,
        scale,
        label: (f) => (f >= 1 ? 'row max' : f <= 0 ? '0' : percent(f * 100)),
        heading: ['per event', range],
        note: `colour per event (${range}${kind}): each row 0 – its max`,
      };
    }
    const min = (whole ? d.run?.min : d.min) ?? 0;
    const max = (whole ? d.run?.max : d.max) ?? 1;
    let scale: Scale;
    if (log && max > 0) {
      // The floor: the smallest positive value of the range's source (the window's cells, or
      // the whole run's smallest), at most 7 decades below the top.
      let floor = min > 0 ? min : Number.POSITIVE_INFINITY;
      if (!whole) for (const v of d.values) if (v !== null && v > 0 && v < floor) floor = v;
      scale = logarithmic(Number.isFinite(floor) ? floor : max / 1e3, max);
    } else {
      scale = linear(Math.min(0, min), max);
    }
    const lo = scale.log ? `${value(scale.lo, unit)} (and 0)` : value(scale.lo, unit);
    return {
      shown: (_r, v) => v,
      scale,
      label: (v) => value(v, unit),
      heading: [range, scale.log ? 'log scale' : 'linear'],
      note: `colour ${lo} – ${value(scale.hi, unit)} (${range}${scale.log ? ', log' : ''})`,
    };
  }

  /** Outlines the selected event's row(s) and the selected thread's column. */
  private overlay(rows: number[], col: number, nr: number, nc: number, clusterCols: number[] = []): void {
    const px = (axis: 'x' | 'y', i: number) =>
      this.map.convertToPixel(axis === 'x' ? { xAxisIndex: 0 } : { yAxisIndex: 0 }, i) as unknown as number;
    const { width, height } = this.body.getBoundingClientRect();
    const top = GRID.top;
    const left = GRID.left;
    const gridW = width - GRID.left - GRID.right;
    const gridH = height - GRID.top - GRID.bottom;
    const bandH = nr > 1 ? Math.abs(px('y', 1) - px('y', 0)) : gridH;
    const bandW = nc > 1 ? Math.abs(px('x', 1) - px('x', 0)) : gridW;
    const shapes: object[] = [];
    for (const r of rows) {
      const y = px('y', r) - bandH / 2;
      shapes.push({ type: 'rect', silent: true, z: 100, shape: { x: left, y, width: gridW, height: bandH }, style: { fill: 'none', stroke: '#111', lineWidth: 2.5 } });
    }
    if (col >= 0) {
      const x = px('x', col) - bandW / 2;
      shapes.push({ type: 'rect', silent: true, z: 100, shape: { x, y: top, width: bandW, height: gridH }, style: { fill: 'none', stroke: '#111', lineWidth: 2, lineDash: [4, 3] } });
    }
    for (const c of clusterCols) {
      const x = px('x', Math.floor(c)) - bandW / 2 + (c - Math.floor(c)) * bandW;
      shapes.push({ type: 'line', silent: true, z: 99, shape: { x1: x, y1: top - 4, x2: x, y2: top + gridH + 4 }, style: { stroke: '#000', lineWidth: 2 } });
    }
    this.map.setOption({ graphic: [...shapes, ...this.legend] as never }, { replaceMerge: ['graphic'] });
  }

  private onClick(p: { data: number[] }): void {
    const d = this.data;
    if (!d || !p.data) return;
    const [c, r] = p.data;
    const rb = d.rows[r];
    const cb = d.cols[c];
    if (rb.first === rb.last && cb.first === cb.last) {
      const patch: Partial<State> = { thread: cb.thread ?? null };
      if (rb.event !== null) patch.event = rb.event;
      store.set(patch);
    } else {
      store.set({ r0: rb.first, r1: rb.last + 1, t0: cb.first, t1: cb.last + 1 });
    }
  }

  private pixelToPos(x: number, y: number): { row: number; col: number } | null {
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
    const at = this.pixelToPos(e.offsetX, e.offsetY);
    if (!at) return;
    const f = e.wheelDelta > 0 ? 0.7 : 1 / 0.7;
    const { r0, r1, t0, t1 } = this.region;
    const zoom = (a: number, b: number, p: number, n: number) => {
      const size = Math.max(1, Math.min(n, Math.round((b - a) * f)));
      const start = Math.max(0, Math.min(n - size, Math.round(p - ((p - a) / (b - a)) * size)));
      return [start, start + size];
    };
    const [nr0, nr1] = zoom(r0, r1, at.row, this.rowCount);
    const [nt0, nt1] = zoom(t0, t1, at.col, this.axisLen);
    store.set({ r0: nr0, r1: nr1, t0: nt0, t1: nt1 });
  }

  private onDragEnd(x: number, y: number): void {
    const from = this.dragFrom;
    this.dragFrom = null;
    if (!from || Math.hypot(x - from.x, y - from.y) < 6) return;
    const a = this.pixelToPos(from.x, from.y);
    const b = this.pixelToPos(x, y);
    if (!a || !b) return;
    const { r0, r1, t0, t1 } = this.region;
    const dr = a.row - b.row;
    const dt = a.col - b.col;
    const clamp = (s: number, size: number, n: number) => Math.max(0, Math.min(n - size, s));
    const nr0 = clamp(r0 + dr, r1 - r0, this.rowCount);
    const nt0 = clamp(t0 + dt, t1 - t0, this.axisLen);
    store.set({ r0: nr0, r1: nr0 + (r1 - r0), t0: nt0, t1: nt0 + (t1 - t0) });
  }
}

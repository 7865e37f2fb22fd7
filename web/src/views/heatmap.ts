// Heat map: rows (events or source lines) × threads, coloured by the selected metric and kind,
// normalized per event or over the whole run. The server reduces the region to screen
// resolution (MAX keeps hot spots); numbers are overlaid when cells are large enough.
// Wheel zooms, drag pans, a click on a cell selects its event and thread (or zooms into a bin).

import type * as echarts from 'echarts';
import type { MatrixResponse } from '../api/MatrixResponse';
import { api } from '../client';
import { numberFor, selectFor } from '../controls';
import { compact, esc, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';

/** The colour scale of the matrix views (cold to hot). */
export const HOT = ['#313695', '#4575b4', '#74add1', '#abd9e9', '#e0f3f8', '#ffffbf', '#fee090', '#fdae61', '#f46d43', '#d73027', '#a50026'];

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
    if (touched(changed, 'metric', 'kind', 'rows', 'callpaths', 'reduce', 'r0', 'r1', 't0', 't1', 'norm', 'thread') || axisChanged(s, changed)) {
      // (the answer also gives the selected thread's position on the axis)
      await this.fetch(s);
    } else if (touched(changed, 'event')) {
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
      const h = Math.max(1, Math.min(region.r1 - region.r0, Math.floor((height - 60) / 3)));
      const w = Math.max(1, Math.min(region.t1 - region.t0, Math.floor((width - 200) / 3)));
      return { rowCount: rows.rows.length, region, data: await api.matrix(s, { ...region, h, w }, signal) };
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
    const rowMax = new Array<number>(nr).fill(0);
    for (let r = 0; r < nr; r++) for (let c = 0; c < nc; c++) rowMax[r] = Math.max(rowMax[r], d.values[r * nc + c] ?? 0);
    const cells: (number | string)[][] = [];
    for (let r = 0; r < nr; r++) {
      for (let c = 0; c < nc; c++) {
        const v = d.values[r * nc + c];
        if (v === null || v === undefined) continue;
        const shown = s.norm === 'event' ? (rowMax[r] > 0 ? v / rowMax[r] : 0) : v;
        cells.push([c, r, shown, v]);
      }
    }
    const { width, height } = this.body.getBoundingClientRect();
    const cellW = (width - 230) / Math.max(1, nc);
    const cellH = (height - 70) / Math.max(1, nr);
    const showNumbers = cellW >= 38 && cellH >= 13;
    const unit = d.unit;
    const selRows: number[] = [];
    d.rows.forEach((b, i) => {
      if (s.event !== null && b.event === s.event) selRows.push(i);
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
      grid: { left: 210, right: 70, top: 10, bottom: 72 },
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
        name: `threads ${this.region.t0}–${this.region.t1 - 1} of ${d.thread_count} (${d.thread_order})`,
        nameLocation: 'middle',
        nameGap: 24,
        axisLabel: { hideOverlap: true, fontSize: 10 },
        splitArea: { show: false },
      },
      yAxis: {
        type: 'category',
        inverse: true,
        data: d.rows.map((b) => b.label),
        axisLabel: { width: 195, overflow: 'truncate', fontSize: 10, hideOverlap: true },
      },
      visualMap: {
        min: s.norm === 'event' ? 0 : (d.min ?? 0),
        max: s.norm === 'event' ? 1 : (d.max ?? 1),
        calculable: false,
        orient: 'vertical',
        right: 5,
        top: 'middle',
        itemHeight: 160,
        dimension: 2,
        inRange: { color: HOT },
        text: s.norm === 'event' ? ['row max', '0'] : [value(d.max ?? 0, unit), value(d.min ?? 0, unit)],
        textStyle: { fontSize: 10 },
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
    this.info.textContent = `rows ${this.region.r0}–${this.region.r1 - 1} of ${d.row_count} in ${nr} bins × threads in ${nc} bins of ${2 ** d.level} · ${d.reduce}${this.clusterNote} · wheel: zoom, drag: pan, click: select`;
  }

  /** Outlines the selected event's row(s) and the selected thread's column. */
  private overlay(rows: number[], col: number, nr: number, nc: number, clusterCols: number[] = []): void {
    const px = (axis: 'x' | 'y', i: number) =>
      this.map.convertToPixel(axis === 'x' ? { xAxisIndex: 0 } : { yAxisIndex: 0 }, i) as unknown as number;
    const { width, height } = this.body.getBoundingClientRect();
    const top = 10;
    const left = 210;
    const gridW = width - 210 - 70;
    const gridH = height - 10 - 72;
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
    this.map.setOption({ graphic: shapes as never }, { replaceMerge: ['graphic'] });
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

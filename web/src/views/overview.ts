// Overview (seed 000 §2.2.1): the whole rows × threads array reduced for orientation:
// runs of more than N empty rows skipped, bins of k rows reduced by MAX or SUM, the long
// array cut into strips shown side by side. A rectangle marks the region the heat map shows
// (its rows r0..r1 × threads t0..t1, at their places among skipped runs and bins, in every
// strip holding some of them); row labels where they fit (else each strip's first row), a
// legend. A click centres the heat map on a row, a drag selects the rows it shows.

import type * as echarts from 'echarts';
import type { Bin } from '../api/Bin';
import type { OverviewResponse } from '../api/OverviewResponse';
import type { OverviewRowJson } from '../api/OverviewRowJson';
import { api } from '../client';
import { numberFor } from '../controls';
import { esc, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';
import { HOT, elideStart, horizontalLegend, inks, labelInterval } from './colourscale';

/** The whole run reduced (empty runs skipped, rows binned, strips); drives the heat map. */
export class OverviewView extends PanelView {
  private strips: echarts.ECharts;
  private data: OverviewResponse | null = null;
  private info: HTMLDivElement;
  private dragRow: number | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.strips = this.chart('overview', this.body, { bottom: '22px' });
    this.info = this.div('note status');
    this.tools.append(numberFor('skip', { owner: this }), numberFor('bin', { owner: this }), numberFor('strips', { owner: this }));
    this.strips.on('mousedown', (p) => {
      this.dragRow = this.rowOf(p as unknown as { seriesIndex: number; data: number[] });
    });
    this.strips.on('mouseup', (p) => {
      const end = this.rowOf(p as unknown as { seriesIndex: number; data: number[] });
      const start = this.dragRow;
      this.dragRow = null;
      if (start === null || end === null) return;
      this.select(Math.min(start, end), Math.max(start, end));
    });
  }

  protected onResize(): void {
    this.draw(this.state());
  }

  /** The first row position of the overview row under an event. */
  private rowOf(p: { seriesIndex: number; data: number[] }): number | null {
    const d = this.data;
    if (!d || !p.data) return null;
    const row = d.strips[p.seriesIndex]?.[p.data[1]];
    return row ? row.first : null;
  }

  private select(first: number, last: number): void {
    const d = this.data;
    if (!d) return;
    const s = store.get();
    if (first === last) {
      // Centre the current heat-map window on the row.
      const size = Math.max(1, (s.r1 ?? d.row_count) - (s.r0 ?? 0));
      const r0 = Math.max(0, Math.min(d.row_count - size, first - Math.floor(size / 2)));
      store.set({ r0, r1: r0 + size });
    } else {
      const lastRow = d.strips.flat().find((r) => r.first === last)?.last ?? last;
      store.set({ r0: first, r1: lastRow + 1 });
    }
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'rows', 'callpaths', 'reduce', 'skip', 'bin', 'strips') || axisChanged(s, changed)) {
      const { width } = this.body.getBoundingClientRect();
      const w = Math.max(4, Math.min(this.ctx.run.threads, Math.floor(width / Math.max(1, s.strips) / 3)));
      const d = await this.load((signal) => api.overview(s, w, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.draw(this.state());
    } else if (touched(changed, 'r0', 'r1', 't0', 't1')) {
      this.draw(s);
    }
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const n = d.strips.length || 1;
    const grids: echarts.GridComponentOption[] = [];
    const xAxes: echarts.XAXisComponentOption[] = [];
    const yAxes: echarts.YAXisComponentOption[] = [];
    const series: echarts.SeriesOption[] = [];
    const { width, height } = this.body.getBoundingClientRect();
    // The heat map's region, clamped as the heat map clamps it.
    const r0 = Math.max(0, Math.min(s.r0 ?? 0, d.row_count));
    const r1 = Math.max(r0 + 1, Math.min(s.r1 ?? d.row_count, d.row_count));
    const t0 = Math.max(0, Math.min(s.t0 ?? 0, d.thread_count));
    const t1 = Math.max(t0 + 1, Math.min(s.t1 ?? d.thread_count, d.thread_count));
    const chartH = height - 22;
    const stripW = width / n;
    // Row labels at the left of each strip where they fit; else the first row's label above it.
    const labels = stripW >= 260;
    const gutter = labels ? Math.min(150, Math.floor(stripW * 0.35)) : 0;
    const top = 18;
    const bottom = 18;
    const shapes: object[] = [];
    const { ink, muted } = inks();
    d.strips.forEach((strip, i) => {
      const box = { x: stripW * i + gutter + 3, y: top, w: stripW - gutter - 8, h: Math.max(10, chartH - top - bottom) };
      grids.push({ left: box.x, width: box.w, top, height: box.h, containLabel: false });
      xAxes.push({ type: 'category', gridIndex: i, data: d.cols.map((c) => c.label), show: false });
      yAxes.push({
        type: 'category',
        gridIndex: i,
        inverse: true,
        data: strip.map((r) => r.label),
        show: labels,
        axisLine: { show: false },
        axisTick: { show: false },
        axisLabel: { show: labels, interval: labelInterval(strip.length, box.h, 11), fontSize: 9, color: muted, formatter: (l: string) => elideStart(l, Math.floor(gutter / 5.2)) },
      });
      const cells: number[][] = [];
      strip.forEach((row, y) => row.values.forEach((v, x) => v !== null && cells.push([x, y, v])));
      const gaps = strip.map((row, y) => ({ y, skipped: row.skipped_before })).filter((g) => g.skipped > 0);
      series.push({
        type: 'heatmap',
        xAxisIndex: i,
        yAxisIndex: i,
        data: cells,
        progressive: 0,
        markLine: gaps.length
          ? { silent: true, symbol: 'none', lineStyle: { color: '#111', type: 'dashed', width: 1 }, label: { show: false }, data: gaps.map((g) => ({ yAxis: g.y })) as never }
          : undefined,
      });
      if (strip.length > 0) {
        const first = strip[0];
        const last = strip[strip.length - 1];
        const span = `rows ${first.first}–${last.last}`;
        // The first row's label after the span, as far as the strip's width allows.
        const chars = Math.floor((stripW - 8) / 6.2);
        const room = chars - span.length - 2;
        const head = labels || room < 6 ? span : `${span}: ${elideStart(first.label, room)}`;
        shapes.push({
          type: 'text',
          name: 'strip-label',
          silent: true,
          z: 110,
          x: stripW * i + 3,
          y: 3,
          style: { text: head, fill: ink, font: '10px sans-serif', width: stripW - 6, overflow: 'truncate' },
        });
      }
      const mark = this.regionRect(strip, d.cols, { r0, r1, t0, t1 }, box);
      if (mark) {
        shapes.push({
          type: 'rect',
          name: 'region',
          info: { strip: i, r0, r1, t0, t1 },
          silent: true,
          z: 120,
          shape: mark,
          style: { fill: 'rgba(253, 224, 71, 0.18)', stroke: '#eab308', lineWidth: 2 },
        });
      }
    });
    const max = d.max ?? 1;
    shapes.push(...horizontalLegend({ right: width - 6, y: chartH - 8, w: 90, lo: value(0, d.unit), hi: value(max, d.unit), blank: 'blank: no value' }));
    this.strips.setOption(
      {
        animation: false,
        grid: grids,
        xAxis: xAxes,
        yAxis: yAxes,
        tooltip: {
          formatter: (p: unknown) => {
            const q = p as { seriesIndex: number; data: number[] };
            const row = d.strips[q.seriesIndex][q.data[1]];
            const span = row.first === row.last ? `row ${row.first}` : `rows ${row.first}–${row.last}`;
            return `${esc(row.label)}<br/>${span}${row.skipped_before ? ` (after ${row.skipped_before} empty rows skipped)` : ''}<br/>${esc(threadName(d.cols[q.data[0]].label))}<br/><b>${value(q.data[2], d.unit)}</b>`;
          },
        },
        visualMap: { show: false, min: 0, max, inRange: { color: HOT }, seriesIndex: series.map((_, i) => i) },
        series,
        graphic: shapes as never,
      },
      true,
    );
    const rows = d.strips.reduce((a, st) => a + st.length, 0);
    this.info.textContent = `${d.row_count} rows → ${rows} (${d.skipped_rows} empty skipped, bins of ${s.bin}, ${s.reduce}) in ${n} strip${n > 1 ? 's' : ''} · colour 0 – ${value(max, d.unit)} (whole run) · outline: the heat map's rows ${r0}–${r1 - 1} × threads ${t0}–${t1 - 1}`;
  }

  /** The pixel rectangle of rows [r0, r1) × thread positions [t0, t1) in a strip drawn in `box`
   * (one category band per overview row and column bin; a region edge inside a bin falls at
   * its share of the bin), or null when the strip holds none of those rows. */
  private regionRect(
    strip: OverviewRowJson[],
    cols: Bin[],
    g: { r0: number; r1: number; t0: number; t1: number },
    box: { x: number; y: number; w: number; h: number },
  ): { x: number; y: number; width: number; height: number } | null {
    // Fractional band positions: `at(bins, p)` is where position p starts.
    const at = (bins: { first: number; last: number }[], p: number): number => {
      for (let k = 0; k < bins.length; k++) {
        const b = bins[k];
        if (p <= b.first) return k;
        if (p <= b.last + 1) return k + (p - b.first) / (b.last - b.first + 1);
      }
      return bins.length;
    };
    const hit = strip.some((row) => row.last >= g.r0 && row.first < g.r1);
    if (!hit || cols.length === 0) return null;
    const y0 = at(strip, g.r0);
    const y1 = at(strip, g.r1);
    const x0 = at(cols, g.t0);
    const x1 = at(cols, g.t1);
    const bandH = box.h / strip.length;
    const bandW = box.w / cols.length;
    return { x: box.x + x0 * bandW, y: box.y + y0 * bandH, width: Math.max(2, (x1 - x0) * bandW), height: Math.max(2, (y1 - y0) * bandH) };
  }
}

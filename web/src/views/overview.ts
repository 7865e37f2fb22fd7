// Overview (seed 000 §2.2.1): the whole rows × threads array reduced for orientation:
// runs of more than N empty rows skipped, bins of k rows reduced by MAX or SUM, the long
// array cut into strips shown side by side. A rectangle marks the region the heat map shows;
// a click centres the heat map on a row, a drag selects the rows it shows.

import type * as echarts from 'echarts';
import type { OverviewResponse } from '../api/OverviewResponse';
import { api } from '../client';
import { numberFor } from '../controls';
import { esc, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';
import { HOT } from './heatmap';

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
    const r0 = s.r0 ?? 0;
    const r1 = s.r1 ?? d.row_count;
    const nc = d.cols.length;
    const t0 = s.t0 ?? 0;
    const t1 = s.t1 ?? d.thread_count;
    const c0 = Math.max(0, d.cols.findIndex((b) => b.last >= t0));
    const c1 = d.cols.findIndex((b) => b.last >= t1 - 1);
    d.strips.forEach((strip, i) => {
      const left = (100 / n) * i;
      grids.push({ left: `${left + 0.5}%`, width: `${100 / n - 1}%`, top: 4, bottom: 4, containLabel: false });
      xAxes.push({ type: 'category', gridIndex: i, data: d.cols.map((c) => c.label), show: false });
      yAxes.push({ type: 'category', gridIndex: i, inverse: true, data: strip.map((r) => r.label), show: false });
      const cells: number[][] = [];
      strip.forEach((row, y) => row.values.forEach((v, x) => v !== null && cells.push([x, y, v])));
      const inView = strip.map((row, y) => ({ y, hit: row.last >= r0 && row.first < r1 })).filter((r) => r.hit);
      const gaps = strip.map((row, y) => ({ y, skipped: row.skipped_before })).filter((g) => g.skipped > 0);
      series.push({
        type: 'heatmap',
        xAxisIndex: i,
        yAxisIndex: i,
        data: cells,
        progressive: 0,
        markArea: inView.length
          ? {
              silent: true,
              itemStyle: { color: 'rgba(253, 224, 71, 0.25)', borderColor: '#eab308', borderWidth: 2 },
              data: [[{ yAxis: inView[0].y, xAxis: c0 }, { yAxis: inView[inView.length - 1].y, xAxis: c1 < 0 ? nc - 1 : c1 }]] as never,
            }
          : undefined,
        markLine: gaps.length
          ? { silent: true, symbol: 'none', lineStyle: { color: '#111', type: 'dashed', width: 1 }, label: { show: false }, data: gaps.map((g) => ({ yAxis: g.y })) as never }
          : undefined,
      });
    });
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
        visualMap: { show: false, min: 0, max: d.max ?? 1, inRange: { color: HOT }, seriesIndex: series.map((_, i) => i) },
        series,
      },
      true,
    );
    const rows = d.strips.reduce((a, st) => a + st.length, 0);
    this.info.textContent = `${d.row_count} rows → ${rows} (${d.skipped_rows} empty skipped, bins of ${s.bin}, ${s.reduce}) in ${n} strip${n > 1 ? 's' : ''}`;
  }
}

// The selected event over time (runs observed over time: snapshots, dumps, live runs): at every
// sample the smallest, mean and largest value across threads, a band of mean ± σ, the sum
// over threads on the right axis, and the selected thread's own line. A vertical line marks
// the sample the other views show; a click on the plot moves every view to that sample.

import type * as echarts from 'echarts';
import type { TrendResponse } from '../api/TrendResponse';
import { api } from '../client';
import { esc, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

/** The selected event's min/mean/max across threads over the samples. */
export class TrendView extends PanelView {
  private plot: echarts.ECharts;
  private data: TrendResponse | null = null;
  private thread: { name: string; values: (number | null)[] } | null = null;
  private title: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.title = this.div();
    this.plot = this.chart('trend', this.body, { top: '26px' });
    // A click anywhere on the plot picks the nearest sample.
    this.plot.getZr().on('click', (ev) => {
      const pt = [ev.offsetX, ev.offsetY];
      if (!this.plot.containPixel('grid', pt)) return;
      const x = this.plot.convertFromPixel({ xAxisIndex: 0 }, pt[0]) as unknown as number;
      const points = this.data?.points ?? [];
      const n = points.length;
      if (!n || !Number.isFinite(x)) return;
      // Points are the kept samples (a live run's window thins older ones): index -> seq.
      const i = Math.max(0, Math.min(n - 1, Math.round(x)));
      const seq = points[i].seq;
      store.set({ sample: i === n - 1 && !this.ctx.run.live ? null : seq });
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const event = s.event;
    if (event === null) {
      this.cancel();
      this.data = null;
      this.title.textContent = 'select an event in any view';
      this.plot.clear();
      return;
    }
    // The trend covers every sample: a different sample only moves the marker.
    if (touched(changed, 'event', 'kind', 'mode', 'thread', 'revision') || changed.has('metric')) {
      const got = await this.load((signal) =>
        Promise.all([
          api.trend(s, event, signal),
          s.thread ? api.kiviat(s, { threadsList: s.thread, events: [event] }, signal).catch(() => null) : Promise.resolve(null),
        ]),
      );
      if (got === SUPERSEDED) return;
      const [trend, thread] = got;
      this.data = trend;
      this.thread = null;
      const tube = thread?.threads.find((t) => t.thread === s.thread);
      if (thread && tube) {
        const scale = thread.scale[0] ?? 1;
        const bySeq = new Map<number, number | null>();
        thread.samples.forEach((seq, i) => bySeq.set(seq, tube.values[i]?.[0] === null ? null : (tube.values[i][0] as number) * scale));
        this.thread = { name: tube.thread, values: trend.points.map((p) => bySeq.get(p.seq) ?? null) };
      }
    }
    this.draw(this.state());
  }

  private draw(s: State): void {
    const t = this.data;
    if (!t) return;
    const u = t.unit;
    // One category per point: the kept samples (older ones of a long live run are thinned).
    const all = this.ctx.series?.samples;
    const names = t.points.map((p) => all?.[p.seq]?.name ?? String(p.seq));
    const last = t.points[t.points.length - 1]?.seq ?? 0;
    const seqNow = s.sample ?? last;
    const cur = Math.max(0, t.points.findIndex((p) => p.seq >= seqNow));
    this.title.innerHTML = `<b>${esc(t.name)}</b> · ${esc(s.kind)} · ${t.mode === 'delta' ? 'change since the previous sample' : 'cumulative'} · sample ${seqNow}: ${esc(all?.[seqNow]?.name ?? names[cur] ?? '')}`;
    const lo = t.points.map((p) => (p.mean === null || p.stddev === null ? null : p.mean - p.stddev));
    const band = t.points.map((p) => (p.stddev === null ? null : 2 * p.stddev));
    const fmt = (v: unknown) => value(v as number, u);
    // Points stay visible where neighbours are missing (no thread had the event yet).
    const sym = t.points.length <= 120 ? { symbol: 'circle', symbolSize: 3 } : { symbol: 'none' };
    // Many samples: a zoomable window; a live run followed at its newest sample scrolls along.
    const n = t.points.length;
    const WINDOW = 60;
    const follow = this.ctx.run.live && s.sample === null;
    const zoom = n > WINDOW ? { startValue: follow ? n - WINDOW : 0, endValue: n - 1 } : null;
    const option = {
      animation: false,
      grid: { left: 70, right: 80, top: 30, bottom: zoom ? 58 : 40 },
      dataZoom: zoom ? [{ type: 'inside', ...zoom }, { type: 'slider', height: 14, bottom: 4, ...zoom }] : [],
      legend: { top: 0, textStyle: { fontSize: 11 }, data: ['max', 'mean', 'min', 'mean ± σ', 'sum', ...(this.thread ? [this.thread.name] : [])] },
      tooltip: {
        trigger: 'axis',
        formatter: (ps: unknown) => {
          const arr = ps as { dataIndex: number }[];
          const i = arr[0]?.dataIndex ?? 0;
          const p = t.points[i];
          if (!p) return '';
          return `<b>${esc(names[i] ?? '')}</b> (${p.threads} threads)<br/>max ${fmt(p.max)} <small>${esc(threadName(p.max_thread))}</small><br/>mean ${fmt(p.mean)} ± ${fmt(p.stddev)}<br/>min ${fmt(p.min)}<br/>sum ${fmt(p.sum)}${this.thread ? `<br/>${esc(this.thread.name)}: ${fmt(this.thread.values[i])}` : ''}`;
        },
      },
      xAxis: { type: 'category', data: names, boundaryGap: false, axisLabel: { fontSize: 10, hideOverlap: true } },
      yAxis: [
        { type: 'value', name: `per thread (${u})`, axisLabel: { formatter: fmt, fontSize: 10 }, nameTextStyle: { fontSize: 10 } },
        { type: 'value', name: `sum (${u})`, axisLabel: { formatter: fmt, fontSize: 10 }, splitLine: { show: false }, nameTextStyle: { fontSize: 10 } },
      ],
      series: [
        { name: 'σ band', type: 'line', data: lo, stack: 'sd', lineStyle: { opacity: 0 }, symbol: 'none', tooltip: { show: false }, legendHoverLink: false, silent: true },
        { name: 'mean ± σ', type: 'line', data: band, stack: 'sd', lineStyle: { opacity: 0 }, symbol: 'none', areaStyle: { color: 'rgba(59,130,246,0.18)' }, itemStyle: { color: 'rgba(59,130,246,0.35)' }, silent: true },
        { name: 'max', type: 'line', data: t.points.map((p) => p.max), ...sym, lineStyle: { color: '#dc2626', width: 1.5 }, itemStyle: { color: '#dc2626' } },
        {
          name: 'mean',
          type: 'line',
          data: t.points.map((p) => p.mean),
          ...sym,
          lineStyle: { color: '#2563eb', width: 2 },
          itemStyle: { color: '#2563eb' },
          markLine: { silent: true, symbol: 'none', animation: false, label: { formatter: names[cur] ?? '', fontSize: 10 }, lineStyle: { color: '#111', type: 'solid', width: 1.5 }, data: [{ xAxis: cur }] },
        },
        { name: 'min', type: 'line', data: t.points.map((p) => p.min), ...sym, lineStyle: { color: '#059669', width: 1.5 }, itemStyle: { color: '#059669' } },
        { name: 'sum', type: 'line', yAxisIndex: 1, data: t.points.map((p) => p.sum), ...sym, lineStyle: { color: '#6b7280', type: 'dashed', width: 1 }, itemStyle: { color: '#6b7280' } },
        ...(this.thread
          ? [{ name: this.thread.name, type: 'line', data: this.thread.values, symbol: 'circle', symbolSize: 4, lineStyle: { color: '#f59e0b', width: 2 }, itemStyle: { color: '#f59e0b' } }]
          : []),
      ],
    };
    this.plot.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

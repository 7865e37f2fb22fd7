// Scaling study of the served runs (`perfscape serve A B C...` at several process counts): the
// selected event's per-thread value against the count on log-log axes, with its Extra-P model
// drawn as a curve and written out; beside it the speedup (with the ideal line) and the
// parallel efficiency against the smallest count, and the event's share of each run.

import type * as echarts from 'echarts';
import type { ScalingResponse } from '../api/ScalingResponse';
import { api } from '../client';
import { esc, percent, ratio, shorten, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, touched } from '../state';

/** The scaling panel: the selected event against the process count. */
export class ScalingView extends PanelView {
  private data: ScalingResponse | null = null;
  private head: HTMLDivElement;
  private loglog: echarts.ECharts;
  private speed: echarts.ECharts;

  constructor(panel: Panel) {
    super(panel);
    this.head = this.div();
    Object.assign(this.head.style, { position: 'absolute', top: '0', left: '0', right: '0' });
    const split = document.createElement('div');
    split.className = 'split scaling-split';
    split.style.top = '40px';
    const a = document.createElement('div');
    const b = document.createElement('div');
    split.append(a, b);
    this.body.appendChild(split);
    this.loglog = this.chart('scaling-loglog', a);
    this.speed = this.chart('scaling-speedup', b);
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'callpaths')) {
      const d = await this.load((signal) => api.scaling(s, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.draw(this.state());
    } else if (touched(changed, 'event')) {
      this.draw(s);
    }
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const u = d.unit;
    const row = d.rows.find((r) => r.event !== null && r.event === s.event);
    const counts = d.counts.map((c, i) => `${c}${d.runs_per_count[i] > 1 ? ` (${d.runs_per_count[i]} runs)` : ''}`).join(', ');
    if (!row) {
      this.head.innerHTML = `Scaling over p = ${esc(counts)}: select an event of this run`;
      this.loglog.clear();
      this.speed.clear();
      return;
    }
    const last = d.counts.length - 1;
    const share = (v: number | null) => (v === null ? '–' : percent(v));
    this.head.innerHTML = `<b>${esc(shorten(row.name, 70))}</b> — ${d.kind} ${esc(d.metric)} per thread over p = ${esc(counts)}: ${value(row.values[0], u)} → ${value(row.values[last], u)}, share of the run ${share(row.share_percent[0])} → ${share(row.share_percent[last])}${row.share_grows ? ' <b class="added">▲ grows with scale</b>' : ''}<br><small>Extra-P model: ${row.model ? `<code>${esc(row.model)}</code>` : esc(row.model_error ?? '–')}</small>`;
    const points = d.counts.map((c, i) => [c, row.values[i]]).filter(([, v]) => v > 0);
    this.loglog.setOption(
      {
        animation: false,
        grid: { left: 72, right: 20, top: 20, bottom: 44 },
        legend: { data: ['measured', 'model'], top: 0, right: 10, textStyle: { fontSize: 10 } },
        tooltip: { trigger: 'item', formatter: (p: unknown) => { const v = (p as { value: [number, number] }).value; return `p = ${v[0]}<br/><b>${value(v[1], u)}</b>`; } },
        xAxis: { type: 'log', logBase: 2, name: 'processes p (log)', nameLocation: 'middle', nameGap: 26, min: d.counts[0], max: d.counts[last] },
        yAxis: { type: 'log', axisLabel: { formatter: (v: number) => value(v, u), fontSize: 10 } },
        series: [
          { name: 'measured', type: 'scatter', data: points, symbolSize: 9, itemStyle: { color: '#c2410c' } },
          { name: 'model', type: 'line', data: row.curve.filter(([, v]) => v > 0), showSymbol: false, lineStyle: { color: '#1d4ed8', width: 2 } },
        ],
      },
      true,
    );
    const base = d.counts[0];
    this.speed.setOption(
      {
        animation: false,
        grid: { left: 56, right: 56, top: 24, bottom: 44 },
        legend: { data: ['speedup', 'ideal', 'efficiency'], top: 0, textStyle: { fontSize: 10 } },
        tooltip: { trigger: 'axis' },
        xAxis: { type: 'value', name: 'processes p', nameLocation: 'middle', nameGap: 26, min: base, max: d.counts[last] },
        yAxis: [
          { type: 'value', name: 'speedup', axisLabel: { formatter: (v: number) => ratio(v), fontSize: 10 } },
          { type: 'value', name: 'efficiency', min: 0, axisLabel: { formatter: (v: number) => `${Math.round(v * 100)}%`, fontSize: 10 } },
        ],
        series: [
          { name: 'speedup', type: 'line', data: d.counts.map((c, i) => [c, row.speedup[i]]), itemStyle: { color: '#c2410c' } },
          { name: 'ideal', type: 'line', data: d.counts.map((c) => [c, c / base]), showSymbol: false, lineStyle: { type: 'dashed', color: '#9ca3af' }, itemStyle: { color: '#9ca3af' } },
          { name: 'efficiency', type: 'line', yAxisIndex: 1, data: d.counts.map((c, i) => [c, row.efficiency[i]]), itemStyle: { color: '#15803d' } },
        ],
      },
      true,
    );
  }
}

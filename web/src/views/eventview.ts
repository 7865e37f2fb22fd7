// One event across threads: the value on each thread as sorted bars with min and max marked
// by their thread ids and lines at the mean and mean ± standard deviation; a histogram with
// adjustable bins beside it. A click anywhere over the bars selects the thread of the bar under
// the cursor (on large runs the bars are narrower than a pixel: the click's x position picks
// it, not the bar's shape).

import type * as echarts from 'echarts';
import type { EventDetail } from '../api/EventDetail';
import { api } from '../client';
import { numberFor } from '../controls';
import { esc, ratio, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

/** One event across threads: sorted per-thread bars and a histogram. */
export class EventView extends PanelView {
  private bars: echarts.ECharts;
  private hist: echarts.ECharts;
  private data: EventDetail | null = null;
  private title: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.title = this.div();
    Object.assign(this.title.style, { position: 'absolute', top: '0', left: '0', right: '0' });
    const split = document.createElement('div');
    split.className = 'split';
    split.style.top = '40px';
    const a = document.createElement('div');
    const b = document.createElement('div');
    split.append(a, b);
    this.body.appendChild(split);
    this.bars = this.chart('event-bars', a);
    this.hist = this.chart('event-hist', b);
    this.tools.appendChild(numberFor('bins', { owner: this }, 'range'));
    this.bars.getZr().on('click', (e) => {
      const t = this.threadAt(e.offsetX, e.offsetY);
      if (t) store.set({ thread: t });
    });
  }

  /** The thread of the bar at pixel (x, y) of the bars' chart: the bar's own thread, or on a
   * large run the thread of the largest value of the bucket of ranks the bar stands for. */
  threadAt(x: number, y: number): string | null {
    const d = this.data;
    if (!d || d.values.length === 0 || !this.bars.containPixel({ gridIndex: 0 }, [x, y])) return null;
    const at = this.bars.convertFromPixel({ xAxisIndex: 0 }, x) as number | number[];
    const i = Math.round(Array.isArray(at) ? at[0] : at);
    return d.values[Math.min(d.values.length - 1, Math.max(0, i))]?.thread ?? null;
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const event = s.event;
    if (event === null) {
      this.cancel();
      this.data = null;
      this.title.textContent = 'select an event in any view';
      this.bars.clear();
      this.hist.clear();
      return;
    }
    if (touched(changed, 'event', 'metric', 'kind', 'bins')) {
      const points = Math.max(64, Math.floor(this.body.getBoundingClientRect().width));
      const d = await this.load((signal) => api.event(s, event, points, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.draw(this.state());
    } else if (touched(changed, 'thread')) {
      this.draw(s);
    }
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const st = d.stats;
    const u = d.unit;
    this.title.innerHTML = `<b>${esc(d.name)}</b>${d.source ? ` <small>${esc(d.source)}</small>` : ''} — ${d.kind} on ${d.threads.toLocaleString('en-US')} threads: mean ${value(st.mean, u)}, σ ${value(st.stddev, u)}, min ${value(st.min, u)} (${esc(threadName(st.min_thread))}), max ${value(st.max, u)} (${esc(threadName(st.max_thread))}), imbalance ${ratio(st.imbalance)}${d.downsampled ? ' · bars: max of each rank bucket' : ''}${d.attributes.length ? ` · ${d.attributes.map((a) => `${esc(a.name)} ${esc(a.value)}`).join(', ')}` : ''}`;
    const maxIdx = d.values.findIndex((v) => v.thread === st.max_thread);
    const minIdx = d.downsampled ? d.values.length - 1 : d.values.findIndex((v) => v.thread === st.min_thread);
    const selIdx = s.thread ? d.values.findIndex((v) => v.thread === s.thread) : -1;
    this.bars.setOption(
      {
        animation: false,
        grid: { left: 70, right: 90, top: 24, bottom: 36 },
        tooltip: {
          trigger: 'axis',
          formatter: (p: unknown) => {
            const q = (p as { dataIndex: number }[])[0];
            const v = d.values[q.dataIndex];
            if (!v) return '';
            const per = Math.ceil(d.threads / d.values.length);
            const place = d.downsampled ? `places ${q.dataIndex * per + 1}–${Math.min(d.threads, (q.dataIndex + 1) * per)} (the largest)` : `#${q.dataIndex + 1}`;
            return `${place}: ${esc(threadName(v.thread))}<br/><b>${value(v.value, u)}</b><br/><small>click: select the thread</small>`;
          },
        },
        xAxis: { type: 'category', data: d.values.map((v) => v.thread), name: 'threads, sorted', nameLocation: 'middle', nameGap: 22, axisLabel: { show: false } },
        yAxis: { type: 'value', axisLabel: { formatter: (v: number) => value(v, u), fontSize: 10 } },
        series: [
          {
            type: 'bar',
            barCategoryGap: '10%',
            data: d.values.map((v, i) => ({ value: v.value, itemStyle: { color: i === selIdx ? '#111' : '#c2410c' } })),
            large: d.values.length > 2000,
            markLine: {
              symbol: 'none',
              label: { formatter: (p: unknown) => `${(p as { name: string }).name} ${value((p as { value: number }).value, u)}`, position: 'end', fontSize: 10 },
              data: [
                { name: 'mean', yAxis: st.mean, lineStyle: { color: '#1d4ed8', width: 2 } },
                { name: '+σ', yAxis: st.mean + st.stddev, lineStyle: { color: '#1d4ed8', type: 'dashed' } },
                { name: '−σ', yAxis: Math.max(0, st.mean - st.stddev), lineStyle: { color: '#1d4ed8', type: 'dashed' } },
              ],
            },
            markPoint: {
              symbolSize: 40,
              label: { fontSize: 9, formatter: (p: unknown) => (p as { name: string }).name },
              data: [
                ...(maxIdx >= 0 ? [{ name: `max ${threadName(st.max_thread)}`, coord: [maxIdx, d.values[maxIdx].value] }] : []),
                ...(minIdx >= 0 ? [{ name: `min ${threadName(st.min_thread)}`, coord: [minIdx, d.values[minIdx].value], itemStyle: { color: '#15803d' } }] : []),
              ],
            },
          },
        ],
      },
      true,
    );
    const h = d.histogram;
    this.hist.setOption(
      {
        animation: false,
        grid: { left: 50, right: 12, top: 24, bottom: 48 },
        tooltip: {
          trigger: 'axis',
          formatter: (p: unknown) => {
            const i = (p as { dataIndex: number }[])[0].dataIndex;
            return `[${value(h.edges[i], u)}, ${value(h.edges[i + 1], u)}${i === h.counts.length - 1 ? ']' : ')'}<br/><b>${h.counts[i]}</b> threads`;
          },
        },
        xAxis: {
          type: 'category',
          data: h.counts.map((_, i) => value(h.edges[i], u)),
          axisLabel: { fontSize: 9, rotate: 30, hideOverlap: true },
          name: 'value',
          nameLocation: 'middle',
          nameGap: 36,
        },
        yAxis: { type: 'value', name: 'threads', minInterval: 1 },
        series: [{ type: 'bar', data: h.counts, itemStyle: { color: '#475569' }, barCategoryGap: '2%' }],
      },
      true,
    );
  }
}

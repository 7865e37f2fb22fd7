// One event across threads: the value on each thread as sorted bars with min and max marked
// by their thread ids and lines at the mean and mean ± standard deviation; a histogram with
// adjustable bins beside it. A click on a bar selects that thread.

import * as echarts from 'echarts';
import type { EventDetail } from '../api/EventDetail';
import { api } from '../client';
import type { Context, View } from '../context';
import { charts, showError } from '../context';
import { esc, ratio, value } from '../format';
import { store, touched, type Selection } from '../state';

export class EventView implements View {
  private bars: echarts.ECharts;
  private hist: echarts.ECharts;
  private data: EventDetail | null = null;
  private title: HTMLDivElement;

  constructor(private el: HTMLElement, tools: HTMLElement, _ctx: Context) {
    this.title = document.createElement('div');
    this.title.className = 'note event-title';
    this.title.style.position = 'absolute';
    this.title.style.top = '0';
    this.title.style.left = '0';
    this.title.style.right = '0';
    const split = document.createElement('div');
    split.className = 'split';
    split.style.top = '40px';
    const a = document.createElement('div');
    const b = document.createElement('div');
    split.append(a, b);
    el.append(this.title, split);
    const ca = document.createElement('div');
    ca.className = 'chart';
    a.appendChild(ca);
    const cb = document.createElement('div');
    cb.className = 'chart';
    b.appendChild(cb);
    this.bars = echarts.init(ca);
    charts.set('event-bars', this.bars);
    this.hist = echarts.init(cb);
    charts.set('event-hist', this.hist);
    const l = document.createElement('label');
    l.append('histogram bins ');
    const bins = document.createElement('input');
    bins.type = 'range';
    bins.min = '0';
    bins.max = '60';
    bins.value = String(store.get().bins);
    bins.title = '0 = automatic (Sturges)';
    bins.addEventListener('change', () => store.set({ bins: Number(bins.value) }));
    l.appendChild(bins);
    tools.appendChild(l);
    this.bars.on('click', (p) => {
      const t = this.data?.values[(p as { dataIndex: number }).dataIndex]?.thread;
      if (t && !this.data?.downsampled) store.set({ thread: t });
    });
  }

  resize(): void {
    this.bars.resize();
    this.hist.resize();
  }

  async update(s: Selection, changed: Set<keyof Selection>): Promise<void> {
    if (s.event === null) {
      this.title.textContent = 'select an event in any view';
      this.bars.clear();
      this.hist.clear();
      return;
    }
    if (touched(changed, 'event', 'metric', 'kind', 'bins')) {
      try {
        const { width } = this.el.getBoundingClientRect();
        this.data = await api.event(s, s.event, Math.max(64, Math.floor(width)));
      } catch (e) {
        showError(this.el, e);
        return;
      }
      this.draw(s);
    } else if (touched(changed, 'thread')) {
      this.draw(s);
    }
  }

  private draw(s: Selection): void {
    const d = this.data;
    if (!d) return;
    const st = d.stats;
    const u = d.unit;
    this.title.innerHTML = `<b>${esc(d.name)}</b>${d.source ? ` <small>${esc(d.source)}</small>` : ''} — ${d.kind} on ${d.threads.toLocaleString('en-US')} threads: mean ${value(st.mean, u)}, σ ${value(st.stddev, u)}, min ${value(st.min, u)} (${esc(st.min_thread ?? '')}), max ${value(st.max, u)} (${esc(st.max_thread ?? '')}), imbalance ${ratio(st.imbalance)}${d.downsampled ? ' · bars: max of each rank bucket' : ''}`;
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
            return `rank ${q.dataIndex + 1}: thread ${esc(v.thread)}<br/><b>${value(v.value, u)}</b>`;
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
                ...(maxIdx >= 0 ? [{ name: `max ${st.max_thread}`, coord: [maxIdx, d.values[maxIdx].value] }] : []),
                ...(minIdx >= 0 ? [{ name: `min ${st.min_thread}`, coord: [minIdx, d.values[minIdx].value], itemStyle: { color: '#15803d' } }] : []),
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

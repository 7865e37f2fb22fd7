// What the time is spent on: the run's time per category as a donut (and the selected thread's
// beside it), the categories of every thread as stacked bars (threads in thread order, or
// sorted by their time in one category: the `csort` setting), and POP's efficiency metrics
// with the categories they counted as useful. A click on a bar selects its thread. Colours
// follow the category's class: warm for time that is not useful (communication,
// synchronization, idle, runtime), cool for useful time, grey for `other`.

import type * as echarts from 'echarts';
import type { CategoriesResponse } from '../api/CategoriesResponse';
import type { CategoryClass } from '../api/CategoryClass';
import { api } from '../client';
import { dynamicSelect } from '../controls';
import { esc, percent, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

/** Shades per class (the n-th category of a class takes the n-th shade). */
const SHADES: Record<CategoryClass, string[]> = {
  communication: ['#dc2626', '#f97316', '#b91c1c', '#fb923c', '#991b1b'],
  synchronization: ['#eab308', '#a16207', '#fde047', '#854d0e'],
  idle: ['#a855f7', '#c084fc'],
  runtime: ['#db2777', '#f472b6', '#9d174d'],
  computation: ['#2563eb', '#0891b2', '#1d4ed8', '#06b6d4', '#3b82f6'],
  io: ['#059669', '#65a30d', '#10b981'],
  overhead: ['#64748b', '#94a3b8'],
};

/** The colour of each category of `d`. */
export function categoryColours(d: Pick<CategoriesResponse, 'categories'>): string[] {
  const used: Partial<Record<CategoryClass, number>> = {};
  return d.categories.map((c, i) => {
    if (i === d.categories.length - 1 && c.name === 'other') return '#9ca3af';
    const n = used[c.class] ?? 0;
    used[c.class] = n + 1;
    const shades = SHADES[c.class];
    return shades[n % shades.length];
  });
}

/** The categories panel: donuts of the run and of the selected thread, stacked bars of the
 * threads, POP's metrics. */
export class CategoriesView extends PanelView {
  private data: CategoriesResponse | null = null;
  private head: HTMLDivElement;
  private donuts: echarts.ECharts;
  private bars: echarts.ECharts;
  private sortControl: HTMLElement | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.head = this.div();
    Object.assign(this.head.style, { position: 'absolute', top: '0', left: '0', right: '0' });
    const split = document.createElement('div');
    split.className = 'split';
    Object.assign(split.style, { top: '44px', gridTemplateColumns: '1fr 2fr' });
    const a = document.createElement('div');
    const b = document.createElement('div');
    split.append(a, b);
    this.body.appendChild(split);
    this.donuts = this.chart('categories-donuts', a);
    this.bars = this.chart('categories-bars', b);
    this.bars.getZr().on('click', (e) => {
      const t = this.threadAt(e.offsetX, e.offsetY);
      if (t) store.set({ thread: t });
    });
  }

  /** The thread of the bar at pixel (x, y) of the bars' chart (a bin's first thread). */
  threadAt(x: number, y: number): string | null {
    const d = this.data;
    if (!d || d.bins.length === 0 || !this.bars.containPixel({ gridIndex: 0 }, [x, y])) return null;
    const at = this.bars.convertFromPixel({ xAxisIndex: 0 }, x) as number | number[];
    const i = Math.round(Array.isArray(at) ? at[0] : at);
    return d.bins[Math.min(d.bins.length - 1, Math.max(0, i))]?.label ?? null;
  }

  /** The index of category `name` in the last answer, or null. */
  private sortIndex(name: string): number | null {
    const i = this.data?.categories.findIndex((c) => c.name === name) ?? -1;
    return i >= 0 ? i : null;
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'csort', 'thread')) {
      const points = Math.max(64, Math.floor(this.body.getBoundingClientRect().width * 0.66));
      // The first answer names the categories; a sort by name is asked for by its index.
      let sort = s.csort ? this.sortIndex(s.csort) : null;
      if (s.csort && this.data === null) {
        const first = await this.load((signal) => api.categories(s, null, points, signal));
        if (first === SUPERSEDED) return;
        this.data = first;
        sort = this.sortIndex(s.csort);
      }
      const d = await this.load((signal) => api.categories(s, sort, points, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.addSortControl(d);
      this.draw(this.state());
    }
  }

  private addSortControl(d: CategoriesResponse): void {
    if (this.sortControl) return;
    const choices = [{ value: '', label: 'thread order' }, ...d.categories.map((c) => ({ value: c.name, label: c.name }))];
    this.sortControl = dynamicSelect('csort', choices, { owner: this, label: 'sort threads by' });
    this.tools.appendChild(this.sortControl);
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const u = d.unit;
    const colours = categoryColours(d);
    const p = d.pop;
    const pct = (x: number) => percent(100 * x);
    this.head.innerHTML = `POP: parallel efficiency <b>${pct(p.parallel_efficiency)}</b> = load balance <b>${pct(p.load_balance)}</b> × communication efficiency <b>${pct(p.communication_efficiency)}</b> <small>(useful: mean ${value(p.mean_useful, u)}, max ${value(p.max_useful, u)}; runtime ${value(p.runtime, u)})</small><br><small>useful: ${esc(p.useful_categories.join(', '))} · not useful: ${esc(p.not_useful_categories.join(', '))}</small>`;
    const slices = (values: number[]) => d.categories.map((c, i) => ({ name: c.name, value: values[i], itemStyle: { color: colours[i] } })).filter((x) => x.value > 0);
    const selected = d.thread;
    const series: echarts.SeriesOption[] = [
      {
        type: 'pie',
        id: 'run',
        name: 'run',
        radius: ['28%', '45%'],
        center: ['50%', selected ? '27%' : '50%'],
        data: slices(d.run),
        label: { show: false },
      },
    ];
    if (selected && s.thread) {
      series.push({
        type: 'pie',
        id: 'thread',
        name: `thread ${s.thread}`,
        radius: ['28%', '45%'],
        center: ['50%', '77%'],
        data: slices(selected.values),
        label: { show: false },
      });
    }
    const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
    this.donuts.setOption(
      {
        animation: false,
        tooltip: {
          trigger: 'item',
          formatter: (q: unknown) => {
            const x = q as { seriesName: string; name: string; value: number; percent: number };
            return `${esc(x.seriesName)}<br/>${esc(x.name)}: <b>${value(x.value, u)}</b> (${percent(x.percent)})`;
          },
        },
        title: [
          { text: `run: ${value(total(d.run), u)}`, left: 'center', top: selected ? '25%' : '48%', textStyle: { fontSize: 11, fontWeight: 'normal' } },
          ...(selected && s.thread ? [{ text: `${threadName(s.thread)}`, left: 'center', top: '75%', textStyle: { fontSize: 11, fontWeight: 'normal' } }] : []),
        ],
        series,
      },
      true,
    );
    const binned = d.bins.some((b) => b.count > 1);
    const sortName = d.sort !== null ? d.categories[d.sort].name : null;
    this.bars.setOption(
      {
        animation: false,
        legend: { type: 'scroll', top: 0, textStyle: { fontSize: 10 } },
        grid: { left: 64, right: 12, top: 40, bottom: 36 },
        tooltip: {
          trigger: 'axis',
          axisPointer: { type: 'shadow' },
          formatter: (q: unknown) => {
            const ps = q as { dataIndex: number }[];
            const b = d.bins[ps[0]?.dataIndex ?? -1];
            if (!b) return '';
            const sum = total(b.values);
            const rows = d.categories
              .map((c, i) => [c, b.values[i], i] as const)
              .filter(([, v]) => v > 0)
              .map(([c, v, i]) => `<span style="color:${colours[i]}">■</span> ${esc(c.name)}: ${value(v, u)} (${percent(sum > 0 ? (100 * v) / sum : 0)})`)
              .join('<br/>');
            return `${esc(threadName(b.label))}${b.count > 1 ? ` and ${b.count - 1} more (mean)` : ''}<br/>${rows}<br/><small>click: select the thread</small>`;
          },
        },
        xAxis: {
          type: 'category',
          data: d.bins.map((b) => b.label),
          name: `threads${sortName ? `, by ${sortName}` : ''}${binned ? ' (bins: mean)' : ''}`,
          nameLocation: 'middle',
          nameGap: 22,
          axisLabel: { show: false },
        },
        yAxis: { type: 'value', axisLabel: { formatter: (v: number) => value(v, u), fontSize: 10 } },
        series: d.categories.map((c, i) => ({
          type: 'bar',
          name: c.name,
          stack: 'all',
          barCategoryGap: '10%',
          large: d.bins.length > 2000,
          itemStyle: { color: colours[i] },
          data: d.bins.map((b) => ({ value: b.values[i], itemStyle: b.label === s.thread ? { color: colours[i], borderColor: '#111', borderWidth: 1 } : undefined })),
        })),
      },
      true,
    );
  }
}

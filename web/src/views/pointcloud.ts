// Point cloud (seed 001): every thread as a point in the space of three events' values,
// coloured by a fourth, rotatable in 3D. Groups of threads that behave alike form clusters;
// outliers stand apart. The selected event is the x axis; y, z and the colour are chosen in the
// panel's tools (default: the largest other events); the selected thread is drawn larger; a
// click on a point selects its thread.

import * as echarts from 'echarts';
import 'echarts-gl';
import type { PointCloudResponse } from '../api/PointCloudResponse';
import { api } from '../client';
import type { Context, View } from '../context';
import { charts, showError } from '../context';
import { esc, shorten, value } from '../format';
import { store, touched, type Selection } from '../state';
import { HOT } from './heatmap';

/** Most points drawn (the server thins the threads evenly beyond). */
const POINTS_MAX = 50_000;

export class PointCloudView implements View {
  private chart: echarts.ECharts;
  private data: PointCloudResponse | null = null;
  private note: HTMLDivElement;

  private pickers: HTMLSelectElement[] = [];

  constructor(private el: HTMLElement, tools: HTMLElement, private ctx: Context) {
    for (const label of ['y', 'z', 'colour']) {
      const l = document.createElement('label');
      l.append(`${label} `);
      const sel = document.createElement('select');
      sel.addEventListener('change', () => store.set({ cloud: this.pickers.map((p) => p.value).join(',') }));
      this.pickers.push(sel);
      l.appendChild(sel);
      tools.appendChild(l);
    }
    this.note = document.createElement('div');
    this.note.className = 'note event-title';
    const div = document.createElement('div');
    div.className = 'chart';
    div.style.top = '26px';
    el.append(this.note, div);
    this.chart = echarts.init(div);
    charts.set('pointcloud', this.chart);
    this.chart.on('click', (p) => {
      const i = (p as { dataIndex?: number; seriesIndex?: number }).dataIndex;
      if ((p as { seriesIndex?: number }).seriesIndex !== 0 || i === undefined) return;
      const t = this.data?.threads[i];
      if (t) store.set({ thread: t });
    });
  }

  resize(): void {
    this.chart.resize();
  }

  /** x: the selected event (if a flat event with values); y, z, colour: the chosen events, else
   * the largest other flat events. */
  private async axes(s: Selection): Promise<number[] | null> {
    const ev = await this.ctx.events({ ...s, callpaths: false });
    const rows = ev.rows.filter((r) => !r.callpath && r.stats.total > 0);
    const flat = rows.map((r) => r.id);
    if (flat.length < 3) return null;
    const x = s.event !== null && flat.includes(s.event) ? s.event : flat[0];
    const chosen = s.cloud.split(',').map((v) => (v === '' ? null : Number(v)));
    const out = [x];
    for (let i = 0; i < 3; i++) {
      const c = chosen[i];
      if (c !== null && c !== undefined && flat.includes(c)) out.push(c);
      else {
        const next = flat.find((id) => !out.includes(id) && !chosen.includes(id));
        if (next !== undefined) out.push(next);
      }
    }
    // The pickers list the flat events (largest first) with "auto".
    this.pickers.forEach((p, i) => {
      p.innerHTML = '';
      p.add(new Option('auto (largest)', ''));
      for (const r of rows.slice(0, 200)) p.add(new Option(shorten(r.name, 40), String(r.id)));
      p.value = chosen[i] !== null && chosen[i] !== undefined && flat.includes(chosen[i] as number) ? String(chosen[i]) : '';
    });
    return out.length >= 3 ? out : null;
  }

  async update(s: Selection, changed: Set<keyof Selection>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'event', 'cloud')) {
      try {
        const axes = await this.axes(s);
        if (!axes) {
          this.chart.clear();
          this.note.textContent = 'a point cloud needs at least 3 events with values';
          this.data = null;
          return;
        }
        this.data = await api.pointcloud(s, axes, POINTS_MAX);
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
    const c = this.data;
    if (!c) return;
    const u = c.unit;
    const [ax, ay, az, ac] = c.axes;
    this.note.innerHTML = `${c.points.length.toLocaleString('en-US')} of ${c.total_threads.toLocaleString('en-US')} threads · colour: ${esc(shorten(ac, 40))}`;
    let cmin = Infinity;
    let cmax = -Infinity;
    for (const p of c.points) {
      cmin = Math.min(cmin, p[3]);
      cmax = Math.max(cmax, p[3]);
    }
    if (!Number.isFinite(cmin)) cmin = cmax = 0;
    const si = s.thread === null ? -1 : c.threads.indexOf(s.thread);
    const fmt = (v: number) => value(v, u);
    const axis = (name: string) => ({ type: 'value', name: shorten(name, 28), min: 'dataMin', max: 'dataMax', nameGap: 28, nameTextStyle: { fontSize: 12, color: '#111' }, axisLabel: { textStyle: { fontSize: 10 }, formatter: fmt } });
    const option = {
      animation: false,
      tooltip: {
        formatter: (p: { dataIndex: number; seriesIndex: number }) => {
          const i = p.seriesIndex === 0 ? p.dataIndex : si;
          const v = c.points[i];
          if (!v) return '';
          return `<b>thread ${esc(c.threads[i])}</b><br/>x ${esc(shorten(ax, 30))}: ${fmt(v[0])}<br/>y ${esc(shorten(ay, 30))}: ${fmt(v[1])}<br/>z ${esc(shorten(az, 30))}: ${fmt(v[2])}<br/>colour ${esc(shorten(ac, 30))}: ${fmt(v[3])}`;
        },
      },
      visualMap: {
        dimension: 3,
        min: cmin,
        max: cmax > cmin ? cmax : cmin + 1,
        inRange: { color: HOT },
        seriesIndex: 0,
        calculable: true,
        right: 0,
        bottom: 10,
        itemHeight: 90,
        textStyle: { fontSize: 9 },
        formatter: (v: number) => fmt(v),
      },
      xAxis3D: axis(ax),
      yAxis3D: axis(ay),
      zAxis3D: axis(az),
      grid3D: { boxWidth: 100, boxDepth: 100, boxHeight: 75, viewControl: { alpha: 18, beta: 40, distance: 185 } },
      series: [
        { type: 'scatter3D', name: 'threads', data: c.points, symbolSize: c.points.length > 5000 ? 3 : 7, itemStyle: { opacity: 0.9 } },
        ...(si >= 0
          ? [{ type: 'scatter3D', name: c.threads[si], data: [c.points[si]], symbolSize: 16, itemStyle: { color: '#111', borderColor: '#fff', borderWidth: 1 } }]
          : []),
      ],
    };
    this.chart.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

// Point cloud (seed 001): every thread as a point in the space of three events' values,
// coloured by a fourth, rotatable in 3D. Groups of threads that behave alike form clusters;
// outliers stand apart. The selected event is the x axis; y, z and the colour are chosen in the
// panel's tools (default: the largest other events); the selected thread is drawn larger; a
// click on a point selects its thread.

import type * as echarts from 'echarts';
import 'echarts-gl';
import type { EventRow } from '../api/EventRow';
import type { PointCloudResponse } from '../api/PointCloudResponse';
import { api } from '../client';
import { esc, shorten, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { HOT } from './heatmap';
import { AXIS_LABEL, AXIS_NAME } from './terrain';

/** Most points drawn (the server thins the threads evenly beyond). */
const POINTS_MAX = 50_000;

/** Threads as points in the space of three events' values, coloured by a fourth. */
export class PointCloudView extends PanelView {
  private chart3d: echarts.ECharts;
  private data: PointCloudResponse | null = null;
  private info: HTMLDivElement;
  /** Index of the selected thread's point (-1: none drawn). */
  private selected = -1;
  /** The y, z and colour event pickers (their events come from the run). */
  private pickers: HTMLSelectElement[] = [];

  constructor(panel: Panel) {
    super(panel);
    for (const label of ['y', 'z', 'colour']) {
      const l = document.createElement('label');
      l.append(`${label} `);
      const sel = document.createElement('select');
      sel.dataset.key = 'cloud';
      sel.dataset.dynamic = '1';
      sel.addEventListener('change', () => store.set({ cloud: this.pickers.map((p) => p.value).join(',') }));
      this.pickers.push(sel);
      l.appendChild(sel);
      this.tools.appendChild(l);
    }
    this.info = this.div();
    this.chart3d = this.chart('pointcloud', this.body, { top: '26px' }, 2);
    this.chart3d.on('click', (p) => {
      // A point of the cloud, or the selected thread's own larger point drawn over it.
      const q = p as { dataIndex?: number; seriesIndex?: number };
      const i = q.seriesIndex === 0 ? q.dataIndex : q.seriesIndex === 1 ? this.selected : undefined;
      const t = i === undefined || i < 0 ? undefined : this.data?.threads[i];
      if (t) store.set({ thread: t });
    });
  }

  /** x: the selected event (if a flat event with values); y, z, colour: the chosen events, else
   * the largest other flat events. Also the flat events with values, largest first. */
  private async axes(s: State): Promise<{ axes: number[] | null; rows: EventRow[] }> {
    const ev = await this.ctx.events({ ...s, callpaths: false });
    const rows = ev.rows.filter((r) => !r.callpath && (r.stats.total ?? 0) > 0);
    const flat = rows.map((r) => r.id);
    if (flat.length < 3) return { axes: null, rows };
    const x = s.event !== null && flat.includes(s.event) ? s.event : flat[0];
    const chosen = this.chosen(s);
    const out = [x];
    for (let i = 0; i < 3; i++) {
      const c = chosen[i];
      if (c !== null && flat.includes(c)) out.push(c);
      else {
        const next = flat.find((id) => !out.includes(id) && !chosen.includes(id));
        if (next !== undefined) out.push(next);
      }
    }
    return { axes: out.length >= 3 ? out : null, rows };
  }

  /** The events chosen for y, z and colour (null: automatic). */
  private chosen(s: State): (number | null)[] {
    return [0, 1, 2].map((i) => {
      const v = s.cloud.split(',')[i];
      return v === undefined || v === '' ? null : Number(v);
    });
  }

  /** The pickers list the flat events (largest first) with "auto". */
  private fillPickers(s: State, rows: EventRow[]): void {
    const chosen = this.chosen(s);
    this.pickers.forEach((p, i) => {
      p.innerHTML = '';
      p.add(new Option('auto (largest)', ''));
      for (const r of rows.slice(0, 200)) p.add(new Option(shorten(r.name, 40), String(r.id)));
      const c = chosen[i];
      p.value = c !== null && rows.some((r) => r.id === c) ? String(c) : '';
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'event', 'cloud')) {
      const got = await this.load(async (signal) => {
        const { axes, rows } = await this.axes(s);
        return { rows, cloud: axes ? await api.pointcloud(s, axes, POINTS_MAX, signal) : null };
      });
      if (got === SUPERSEDED) return;
      this.data = got.cloud;
      if (!got.cloud) {
        this.chart3d.clear();
        this.info.textContent = 'a point cloud needs at least 3 events with values';
        return;
      }
      this.fillPickers(s, got.rows);
      this.draw(this.state());
    } else if (touched(changed, 'thread')) {
      this.draw(s);
    }
  }

  private draw(s: State): void {
    const c = this.data;
    if (!c) return;
    const u = c.unit;
    const [ax, ay, az, ac] = c.axes;
    // The axes' events in plain text too (the 3-D axis names turn with the box).
    this.info.innerHTML = `${c.points.length.toLocaleString('en-US')} of ${c.total_threads.toLocaleString('en-US')} threads · <b>x</b> ${esc(shorten(ax, 30))} · <b>y</b> ${esc(shorten(ay, 30))} · <b>z</b> ${esc(shorten(az, 30))} · <b>colour</b> ${esc(shorten(ac, 30))} · click a point: select its thread`;
    this.info.title = `x: ${ax}\ny: ${ay}\nz: ${az}\ncolour: ${ac}`;
    let cmin = Infinity;
    let cmax = -Infinity;
    for (const p of c.points) {
      cmin = Math.min(cmin, p[3]);
      cmax = Math.max(cmax, p[3]);
    }
    if (!Number.isFinite(cmin)) cmin = cmax = 0;
    const si = s.thread === null ? -1 : c.threads.indexOf(s.thread);
    this.selected = si;
    const fmt = (v: number) => value(v, u);
    const axis = (name: string) => ({ type: 'value', name: shorten(name, 28), min: 'dataMin', max: 'dataMax', nameGap: 30, nameTextStyle: AXIS_NAME, axisLabel: { textStyle: AXIS_LABEL, formatter: fmt } });
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
    this.chart3d.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

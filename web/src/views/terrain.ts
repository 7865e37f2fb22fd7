// 3D terrain (seed 001): events × threads × value as a surface, rotatable, with selectable
// X/Y resolution, and denotators: the k largest peaks labelled, with a legend. The selected
// event's row is drawn as a line across the terrain.

import type * as echarts from 'echarts';
import 'echarts-gl';
import type { TerrainResponse } from '../api/TerrainResponse';
import { api } from '../client';
import { selectFor } from '../controls';
import { esc, shorten, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';
import { HOT } from './heatmap';

/** Events × threads × value as a 3-D surface with its largest peaks labelled. */
export class TerrainView extends PanelView {
  private surface: echarts.ECharts;
  private data: TerrainResponse | null = null;
  private legend: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.surface = this.chart('terrain');
    this.legend = this.div('legend');
    this.tools.append(selectFor('tx', { owner: this }), selectFor('ty', { owner: this }), selectFor('peaks', { owner: this }));
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'rows', 'callpaths', 'tx', 'ty', 'peaks') || axisChanged(s, changed)) {
      const t = await this.load((signal) => api.terrain(s, signal));
      if (t === SUPERSEDED) return;
      this.data = t;
      await this.draw(this.state());
    } else if (touched(changed, 'event')) {
      await this.draw(s);
    }
  }

  private async draw(s: State): Promise<void> {
    const t = this.data;
    if (!t) return;
    const g = t.grid;
    const nr = g.rows.length;
    const nc = g.cols.length;
    if (nr === 0 || nc === 0) {
      this.surface.clear();
      return;
    }
    const surface: number[][] = [];
    // The first (largest) rows go to the back so that they do not hide the others.
    const yOf = (r: number) => nr - 1 - r;
    for (let r = nr - 1; r >= 0; r--) for (let c = 0; c < nc; c++) surface.push([c, yOf(r), g.values[r * nc + c] ?? 0]);
    const u = g.unit;
    const peaks = t.peaks.map((p, i) => ({ name: `${i + 1}`, value: [p.col_bin, yOf(p.row_bin), p.value] }));
    // The selected event's row (or its routine's) as a highlighted line.
    const selLine: number[][] = [];
    const event = s.event;
    const pos = await this.load(async () => (event === null ? undefined : this.ctx.rowOf(s, event)), 'row');
    if (pos === SUPERSEDED || this.data !== t) return; // a newer draw is under way
    if (event !== null) {
      const rb = pos === undefined ? -1 : g.rows.findIndex((b) => pos >= b.first && pos <= b.last);
      if (rb >= 0) for (let c = 0; c < nc; c++) selLine.push([c, yOf(rb), (g.values[rb * nc + c] ?? 0) * 1.001]);
    }
    const option = {
      tooltip: {
        formatter: (p: unknown) => {
          const q = p as { value?: number[]; data?: number[] | { value: number[] } };
          const v = Array.isArray(q.data) ? q.data : (q.data as { value: number[] })?.value ?? q.value;
          if (!v) return '';
          return `${esc(g.rows[yOf(v[1])]?.label ?? '')}<br/>threads ${esc(g.cols[v[0]]?.label ?? '')}<br/><b>${value(v[2], u)}</b>`;
        },
      },
      visualMap: { show: false, dimension: 2, min: 0, max: g.max ?? 1, inRange: { color: HOT }, seriesIndex: 0 },
      xAxis3D: { type: 'value', name: 'threads', min: 0, max: Math.max(1, nc - 1), axisLabel: { formatter: (v: number) => g.cols[Math.round(v)]?.label.split(' ')[0] ?? '', fontSize: 9 } },
      yAxis3D: { type: 'value', name: 'events', min: 0, max: Math.max(1, nr - 1), axisLabel: { show: false } },
      zAxis3D: { type: 'value', name: g.unit, axisLabel: { formatter: (v: number) => value(v, u), fontSize: 9 } },
      grid3D: {
        boxWidth: 120,
        boxDepth: 90,
        boxHeight: 50,
        viewControl: { alpha: 30, beta: 35, distance: 175 },
        light: { main: { intensity: 1.1, shadow: false }, ambient: { intensity: 0.35 } },
      },
      series: [
        { type: 'surface', data: surface, shading: 'lambert', wireframe: { show: nr * nc < 6000, lineStyle: { width: 0.5, color: 'rgba(0,0,0,0.25)' } } },
        {
          type: 'scatter3D',
          data: peaks,
          symbolSize: 9,
          itemStyle: { color: '#111' },
          label: { show: true, formatter: (p: { name: string }) => p.name, textStyle: { fontSize: 13, fontWeight: 'bold', color: '#111', backgroundColor: 'rgba(255,255,255,0.8)', padding: 2 } },
        },
        ...(selLine.length ? [{ type: 'line3D', data: selLine, lineStyle: { width: 4, color: '#111' } }] : []),
      ],
    };
    this.surface.setOption(option as unknown as echarts.EChartsOption, true);
    this.legend.innerHTML = t.peaks.length
      ? `<b>Largest peaks</b><ol>${t.peaks.map((p, i) => `<li title="${esc(p.name)}" data-event="${p.event}"><b>${i + 1}</b> ${esc(shorten(p.name, 38))} · ${esc(threadName(p.thread))} · ${value(p.value, u)}</li>`).join('')}</ol>`
      : '';
    this.legend.querySelectorAll<HTMLElement>('li').forEach((li) => li.addEventListener('click', () => store.set({ event: Number(li.dataset.event) })));
  }
}

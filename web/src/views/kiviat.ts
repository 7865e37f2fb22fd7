// Kiviat tube (seed 001): for a few threads, a Kiviat (radar) polygon of several events at
// every sample, stacked along the time axis into a tube, rotatable in 3D. Each event's axis is
// scaled by its largest value in the answer. A thread whose tube bulges on one axis spends
// more there than the others; a tube that widens over time shows growth. The radar mode shows
// the polygons of the current sample only. Clicking a tube or polygon selects its thread.

import type * as echarts from 'echarts';
import 'echarts-gl';
import type { KiviatResponse } from '../api/KiviatResponse';
import { api } from '../client';
import { selectFor } from '../controls';
import { esc, shorten, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { AXIS_LABEL, AXIS_NAME } from './terrain';

/** Distinct colours for up to 10 threads (then repeated). */
const PALETTE = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#4b5563', '#b45309'];

/** Most polygons drawn along a tube (the answer's samples are thinned evenly beyond). */
const RINGS_MAX = 48;

/** Kiviat tubes (or radars) of a few threads over the samples. */
export class KiviatView extends PanelView {
  private tube: echarts.ECharts;
  private data: KiviatResponse | null = null;
  private info: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.info = this.div();
    this.tube = this.chart('kiviat', this.body, { top: '26px' }, 2);
    this.tools.appendChild(selectFor('kiviat', { owner: this }));
    // A radar polygon, a tube's vertex (lines cannot be picked in 3-D; their vertices can) or a
    // legend entry: its series is named after its thread.
    this.tube.on('click', (p) => {
      const name = (p as { seriesName?: string }).seriesName ?? '';
      const t = name.split(' ')[0];
      if (this.data?.threads.some((x) => x.thread === t)) store.set({ thread: t });
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'kind', 'mode', 'thread', 'revision') || changed.has('metric')) {
      const k = await this.load((signal) => api.kiviat(s, { thread: s.thread }, signal));
      if (k === SUPERSEDED) return;
      this.data = k;
      this.draw(this.state());
    } else if (touched(changed, 'kiviat', 'sample')) {
      this.draw(s);
    }
  }

  private colour(i: number): string {
    return PALETTE[i % PALETTE.length];
  }

  private draw(s: State): void {
    const k = this.data;
    if (!k) return;
    const ne = k.events.length;
    if (ne < 3 || k.threads.length === 0 || k.samples.length === 0) {
      this.tube.clear();
      this.info.textContent = 'a Kiviat diagram needs at least 3 events with values';
      return;
    }
    const names = this.ctx.series?.samples.map((x) => x.name) ?? [];
    const axes = k.events.map((e, i) => `${shorten(e, 24)} (max ${value(k.scale[i], k.unit)})`);
    this.info.innerHTML = `${k.threads.length} threads · ${ne} events, each axis scaled to its largest value · ${s.mode === 'delta' ? 'change per interval' : 'cumulative'}`;
    if (s.kiviat === 'radar') {
      const cur = s.sample ?? k.samples[k.samples.length - 1];
      let idx = k.samples.findIndex((x) => x >= cur);
      if (idx < 0) idx = k.samples.length - 1;
      const option = {
        animation: false,
        tooltip: {},
        // Series are named `N.C.T` (a click selects that thread); the legend reads `rank N`.
        legend: { bottom: 0, type: 'scroll', textStyle: { fontSize: 10 }, formatter: (n: string) => threadName(n) },
        title: { text: `sample ${k.samples[idx]}: ${names[k.samples[idx]] ?? ''}`, textStyle: { fontSize: 11 }, left: 'center', top: 0 },
        radar: { indicator: axes.map((n) => ({ name: n, max: 1, min: 0 })), radius: '62%', axisName: { fontSize: 11, color: '#1f2937' } },
        series: k.threads.map((t, i) => ({
          name: t.thread,
          type: 'radar',
          symbolSize: 3,
          lineStyle: { width: t.thread === s.thread ? 3 : 1.2, color: this.colour(i) },
          itemStyle: { color: this.colour(i) },
          areaStyle: t.thread === s.thread ? { opacity: 0.15 } : undefined,
          data: [{ value: (t.values[idx] ?? []).map((v) => v ?? 0), name: t.thread }],
        })),
      };
      this.tube.setOption(option as unknown as echarts.EChartsOption, true);
      return;
    }
    // 3D tube: ring r of thread t at height z = sample position.
    const narrow = this.tube.getWidth() < 600;
    const step = Math.max(1, Math.ceil(k.samples.length / RINGS_MAX));
    const rings: number[] = [];
    for (let i = 0; i < k.samples.length; i += step) rings.push(i);
    if (rings[rings.length - 1] !== k.samples.length - 1) rings.push(k.samples.length - 1);
    const angle = (e: number) => (2 * Math.PI * e) / ne;
    const at = (v: number, e: number, z: number) => [v * Math.cos(angle(e)), v * Math.sin(angle(e)), z];
    const series: object[] = [];
    const cur = s.sample ?? k.samples[k.samples.length - 1];
    k.threads.forEach((t, ti) => {
      const sel = t.thread === s.thread;
      const colour = this.colour(ti);
      for (const r of rings) {
        const row = t.values[r];
        if (!row || row.some((v) => v === null)) continue;
        const pts = row.map((v, e) => at(v as number, e, k.samples[r]));
        pts.push(pts[0]);
        const here = k.samples[r] === cur;
        series.push({
          type: 'line3D',
          name: `${t.thread} ${names[k.samples[r]] ?? k.samples[r]}`,
          data: pts,
          lineStyle: { color: colour, width: sel ? 3 : here ? 2.5 : 1, opacity: sel || here ? 1 : 0.55 },
        });
      }
      // The thread's vertices as points: what a click picks (named after the thread).
      const vertices: number[][] = [];
      for (const r of rings) (t.values[r] ?? []).forEach((v, e) => v !== null && vertices.push(at(v, e, k.samples[r])));
      series.push({ type: 'scatter3D', name: `${t.thread} (vertices)`, data: vertices, symbolSize: sel ? 7 : 5, itemStyle: { color: colour, opacity: sel ? 1 : 0.7 } });
      // Lines along the tube through each event's vertex.
      for (let e = 0; e < ne; e++) {
        const pts = rings.filter((r) => t.values[r]?.[e] !== null && t.values[r]?.[e] !== undefined).map((r) => at(t.values[r][e] as number, e, k.samples[r]));
        if (pts.length > 1) series.push({ type: 'line3D', name: `${t.thread} ${k.events[e]}`, data: pts, lineStyle: { color: colour, width: sel ? 2 : 0.8, opacity: sel ? 0.9 : 0.35 } });
      }
    });
    // The event axes at the newest end of the tube, labelled.
    const zMax = k.samples[k.samples.length - 1];
    for (let e = 0; e < ne; e++) {
      series.push({ type: 'line3D', name: `axis ${k.events[e]}`, data: [[0, 0, zMax], at(1.05, e, zMax)], lineStyle: { color: '#9ca3af', width: 1 }, silent: true });
    }
    series.push({
      type: 'scatter3D',
      name: 'axes',
      // Short names in the picture (the scale is in the radar's axes and the tooltips); a narrow
      // panel gets the shortest.
      data: k.events.map((ev, e) => ({ value: at(1.15, e, zMax), name: shorten(ev, narrow ? 16 : 24) })),
      symbolSize: 1,
      silent: true,
      label: { show: true, formatter: (p: { name: string }) => p.name, textStyle: { fontSize: 12, color: '#111827', backgroundColor: 'rgba(255,255,255,0.85)', padding: [4, 3], lineHeight: 18 } },
    });
    const option = {
      animation: false,
      tooltip: { formatter: (p: { seriesName?: string }) => `<b>${esc(threadName((p.seriesName ?? '').split(' ')[0]))}</b> ${esc((p.seriesName ?? '').split(' ').slice(1).join(' '))}<br/><small>click: select the thread</small>` },
      // The radial plane has no axes of its own (the event axes are drawn at the tube's end).
      xAxis3D: { type: 'value', min: -1.2, max: 1.2, name: '', axisLabel: { show: false }, axisTick: { show: false } },
      yAxis3D: { type: 'value', min: -1.2, max: 1.2, name: '', axisLabel: { show: false }, axisTick: { show: false } },
      zAxis3D: {
        type: 'value',
        name: 'sample',
        min: 0,
        max: Math.max(1, zMax),
        nameTextStyle: AXIS_NAME,
        axisLabel: { textStyle: AXIS_LABEL, formatter: (v: number) => names[Math.round(v)] ?? String(v) },
      },
      grid3D: {
        boxWidth: 100,
        boxDepth: 100,
        boxHeight: 90,
        axisLine: { lineStyle: { color: '#d1d5db' } },
        splitLine: { show: false },
        axisPointer: { show: false },
        viewControl: { alpha: 28, beta: 30, distance: narrow ? 270 : 230 },
      },
      series,
    };
    this.tube.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

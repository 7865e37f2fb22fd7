// Timeline of a trace: one lane per thread (its intervals by nesting depth), zoom (wheel) and
// pan (drag, or the slider), answered at screen resolution by /api/timeline (runs of intervals
// shorter than a pixel come as one grey box). Above the lanes, the seed's single merged
// timeline of flagged events: how many threads are inside the selected event at each moment.
// A click on a slice selects its event and thread in every view; the selected event's slices
// stand out.

import type * as echarts from 'echarts';
import type { TimelineResponse } from '../api/TimelineResponse';
import { api } from '../client';
import { charts } from '../context';
import { durationUs, esc, shorten, threadName } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#a0cbe8'];

function colourOf(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(h) % PALETTE.length];
}

/** Nesting depths drawn per lane. */
const DEPTHS = 12;

interface Row {
  lane: number;
  depth: number;
}

/** The trace's lanes over time with the merged timeline of the selected event. */
export class TimelineView extends PanelView {
  private lanes: echarts.ECharts;
  private data: TimelineResponse | null = null;
  private window: [number, number] | null = null;
  private timer: number | undefined;
  private info: HTMLDivElement;
  private rows: Row[] = [];

  constructor(panel: Panel) {
    super(panel);
    this.info = this.div();
    this.lanes = this.chart('timeline', this.body, { top: '26px' });
    this.lanes.on('datazoom', () => this.onZoom());
    this.lanes.on('click', (p) => {
      const d = (p as { data?: { value?: number[] }; seriesId?: string }).data?.value;
      if ((p as { seriesId?: string }).seriesId !== 'slices' || !d || !this.data) return;
      const lane = this.data.lanes[d[4]];
      const name = this.data.names[d[5]];
      if (!lane || name === undefined) return;
      this.ctx.events({ ...store.get(), callpaths: false }).then((ev) => {
        const row = ev.rows.find((r) => r.name === name);
        store.set({ thread: lane.thread, ...(row ? { event: row.id } : {}) });
      });
    });
    this.own(() => clearTimeout(this.timer));
  }

  protected onResize(): void {
    this.fetch(this.state());
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'event', 'metric')) await this.fetch(s);
    else if (touched(changed, 'thread')) this.draw(s);
  }

  /** Width of the plot in pixels. */
  private width(): number {
    return Math.max(100, this.lanes.getWidth() - 150);
  }

  private onZoom(): void {
    const d = this.data;
    if (!d) return;
    const dz = (this.lanes.getOption() as { dataZoom?: { start?: number; end?: number }[] }).dataZoom?.[0];
    if (!dz) return;
    const a = ((dz.start ?? 0) / 100) * d.duration_ns;
    const b = ((dz.end ?? 100) / 100) * d.duration_ns;
    this.window = [a, b];
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.fetch(this.state()), 120);
  }

  private async fetch(s: State): Promise<void> {
    const d = await this.load((signal) => api.timeline(this.window, this.width(), s.event, signal));
    if (d === SUPERSEDED) return;
    this.data = d;
    charts.set('timeline-data', d);
    this.draw(this.state());
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    // Rows: each lane's depths (at most DEPTHS), lanes top to bottom.
    this.rows = [];
    const firstRow: number[] = [];
    d.lanes.forEach((l, i) => {
      firstRow.push(this.rows.length);
      for (let k = 0; k < Math.max(1, Math.min(DEPTHS, l.depths)); k++) this.rows.push({ lane: i, depth: k });
    });
    const labels = this.rows.map((r) => (r.depth === 0 ? shorten(`${d.lanes[r.lane].thread}  ${d.lanes[r.lane].label}`, 24) : ''));
    const selName = s.event === null ? null : d.flagged[0] ?? null;
    const colours: string[] = [];
    const colourIndex = new Map<string, number>();
    const items: { value: number[] }[] = [];
    d.lanes.forEach((l, li) => {
      for (let i = 0; i < l.start.length; i++) {
        if (l.depth[i] >= DEPTHS) continue;
        const name = d.names[l.name[i]];
        const merged = l.merged[i] > 1;
        const dim = selName !== null && name !== selName;
        const c = merged ? '#9ca3af' : colourOf(name);
        let ci = colourIndex.get(c);
        if (ci === undefined) {
          ci = colours.length;
          colours.push(c);
          colourIndex.set(c, ci);
        }
        items.push({ value: [l.start[i], l.end[i], firstRow[li] + l.depth[i], l.merged[i], li, l.name[i], ci, dim ? 1 : 0] });
      }
    });
    const us = (ns: number) => durationUs(ns / 1000);
    const flagged = d.flagged.length ? d.flagged.join(', ') : 'no event selected';
    const px = (d.to_ns - d.from_ns) / d.width;
    this.info.innerHTML = `${d.lane_count} threads · ${us(d.duration_ns)} · window ${us(d.from_ns)} – ${us(d.to_ns)} · top strip: threads inside <b>${esc(shorten(flagged, 50))}</b>`;
    const occ = d.occupancy.map((v, i) => [d.from_ns + (i + 0.5) * px, v]);
    const zoom = { start: (d.from_ns / d.duration_ns) * 100, end: (d.to_ns / d.duration_ns) * 100 };
    const option = {
      animation: false,
      tooltip: {
        formatter: (p: { seriesId?: string; value?: number[] }) => {
          const v = p.value;
          if (!v) return '';
          if (p.seriesId === 'occupancy') return `${us(v[0])}: ${v[1].toFixed(2)} threads inside ${esc(flagged)}`;
          const lane = d.lanes[v[4]];
          const name = d.names[v[5]] ?? '';
          return `<b>${esc(v[3] > 1 ? `${v[3]} intervals (shortest under a pixel), longest: ${name}` : name)}</b><br/>${esc(threadName(lane?.thread))} (${esc(lane?.label ?? '')})<br/>${us(v[0])} – ${us(v[1])}: ${us(v[1] - v[0])}`;
        },
      },
      graphic: [{ type: 'text', left: 8, top: 14, style: { text: 'threads in\nselected event', fontSize: 9, fill: '#b91c1c' } }],
      grid: [
        { left: 150, right: 20, top: 6, height: 34 },
        { left: 150, right: 20, top: 48, bottom: 40 },
      ],
      xAxis: [
        { type: 'value', gridIndex: 0, min: 0, max: d.duration_ns, show: false },
        { type: 'value', gridIndex: 1, min: 0, max: d.duration_ns, axisLabel: { formatter: (v: number) => us(v), fontSize: 10 } },
      ],
      yAxis: [
        { type: 'value', gridIndex: 0, min: 0, max: Math.max(1, d.lane_count), axisLabel: { fontSize: 9 }, splitNumber: 1 },
        {
          type: 'category',
          gridIndex: 1,
          inverse: true,
          data: labels,
          axisTick: { show: false },
          axisLabel: {
            fontSize: 10,
            interval: 0,
            formatter: (v: string) => v,
            rich: {},
            color: (_v: string, i: number) => (d.lanes[this.rows[i]?.lane]?.thread === s.thread ? '#b45309' : '#374151'),
          },
        },
      ],
      dataZoom: [
        { type: 'inside', xAxisIndex: [0, 1], filterMode: 'none', ...zoom },
        { type: 'slider', xAxisIndex: [0, 1], filterMode: 'none', height: 16, bottom: 6, ...zoom, labelFormatter: (v: number) => us(v) },
      ],
      series: [
        { id: 'occupancy', type: 'line', xAxisIndex: 0, yAxisIndex: 0, data: occ, symbol: 'none', step: 'middle', lineStyle: { width: 1, color: '#b91c1c' }, areaStyle: { color: 'rgba(185,28,28,0.35)' } },
        {
          id: 'slices',
          type: 'custom',
          xAxisIndex: 1,
          yAxisIndex: 1,
          encode: { x: [0, 1], y: 2 },
          data: items,
          renderItem: (params: { coordSys: { x: number; y: number; width: number; height: number } }, apiR: { value: (i: number) => number; coord: (v: number[]) => number[]; size: (v: number[]) => number[] }) => {
            const a = apiR.coord([apiR.value(0), apiR.value(2)]);
            const b = apiR.coord([apiR.value(1), apiR.value(2)]);
            const h = apiR.size([0, 1])[1] * 0.8;
            const cs = params.coordSys;
            const x0 = Math.max(a[0], cs.x);
            const x1 = Math.min(Math.max(b[0], a[0] + 1), cs.x + cs.width);
            if (x1 <= x0) return null;
            const name = d.names[apiR.value(5)] ?? '';
            const wide = x1 - x0 > 40 && apiR.value(3) === 1;
            return {
              type: 'rect',
              shape: { x: x0, y: a[1] - h / 2, width: x1 - x0, height: h },
              style: { fill: colours[apiR.value(6)], opacity: apiR.value(7) ? 0.3 : 1, stroke: 'rgba(255,255,255,0.6)', lineWidth: x1 - x0 > 3 ? 0.5 : 0 },
              textContent: wide ? { style: { text: name, fill: '#fff', fontSize: 10, width: x1 - x0 - 6, overflow: 'truncate' } } : undefined,
              textConfig: wide ? { position: 'inside' } : undefined,
            };
          },
        },
      ],
    };
    this.lanes.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

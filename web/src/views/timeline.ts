// Timeline of a trace: one lane per thread (its intervals by nesting depth), zoom (wheel, W/S:
// the time under the cursor stays under it) and pan (drag, A/D, or the slider), answered at
// screen resolution by /api/timeline (runs of intervals
// shorter than a pixel come as one grey box). Above the lanes, the seed's single merged
// timeline of flagged events: how many threads are inside the selected event at each moment.
// A click on a slice selects its event and thread in every view; the selected event's slices
// stand out. A slice is labelled only where its name fits it (cut with "…" to its width).

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

/** The font of the slices' labels (measured to fit them). */
const LABEL_FONT = '10px sans-serif';
/** Room left on each side of a label inside its slice (px). */
const LABEL_PAD = 3;
/** One wheel step or W/S press zooms by this factor (in) or its inverse (out). */
const ZOOM_STEP = 0.8;
/** A/D pan by this share of the window. */
const PAN_STEP = 0.15;
/** The narrowest window (ns). */
const WINDOW_MIN = 1000;

let measurer: CanvasRenderingContext2D | null = null;
const widths = new Map<string, number>();

/** The width of `text` in the labels' font (px). */
function textWidth(text: string): number {
  let w = widths.get(text);
  if (w === undefined) {
    measurer ??= document.createElement('canvas').getContext('2d');
    if (!measurer) return text.length * 6;
    measurer.font = LABEL_FONT;
    w = measurer.measureText(text).width;
    if (widths.size > 20000) widths.clear();
    widths.set(text, w);
  }
  return w;
}

/** `text` as it fits in `room` px: whole, or cut with "…" (at least one character kept); null
 * when not even that fits. */
export function elide(text: string, room: number): string | null {
  if (textWidth(text) <= room) return text;
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(`${text.slice(0, mid)}…`) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo >= 1 ? `${text.slice(0, lo)}…` : null;
}

/** What ECharts' `datazoom` event carries (a window in values or in percent). */
interface ZoomRange {
  start?: number;
  end?: number;
  startValue?: number;
  endValue?: number;
}
type ZoomEvent = ZoomRange & { batch?: ZoomRange[] };

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
    this.lanes.on('datazoom', (e) => this.onZoom(e as ZoomEvent));
    // The wheel zooms about the time under the cursor (ECharts' own wheel zoom is off).
    const dom = this.lanes.getDom();
    const wheel = (e: WheelEvent) => {
      const r = dom.getBoundingClientRect();
      const x = e.clientX - r.left;
      if (!this.data || !this.lanes.containPixel({ gridIndex: 1 }, [x, Math.max(e.clientY - r.top, 60)]) || e.deltaY === 0) return;
      e.preventDefault();
      this.zoomAt(x, e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP);
    };
    // Captured: ECharts stops the wheel's propagation at its canvas.
    dom.addEventListener('wheel', wheel, { passive: false, capture: true });
    // W/S zoom about the mouse (else the middle), A/D pan, while the mouse is over the timeline
    // or it has the focus (as in Perfetto).
    dom.tabIndex = 0;
    let over = false;
    let mouseX: number | null = null;
    const move = (e: MouseEvent) => {
      over = true;
      mouseX = e.clientX - dom.getBoundingClientRect().left;
    };
    const leave = () => {
      over = false;
      mouseX = null;
    };
    const key = (e: KeyboardEvent) => {
      if (!(over || document.activeElement === dom) || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName)) return;
      const k = e.key.toLowerCase();
      const mid = () => this.lanes.convertToPixel({ xAxisIndex: 1 }, (this.current()[0] + this.current()[1]) / 2) as number;
      if (k === 'w' || k === 's') this.zoomAt(mouseX ?? mid(), k === 'w' ? ZOOM_STEP : 1 / ZOOM_STEP);
      else if (k === 'a' || k === 'd') this.pan(k === 'a' ? -PAN_STEP : PAN_STEP);
      else return;
      e.preventDefault();
    };
    dom.addEventListener('mousemove', move);
    dom.addEventListener('mouseleave', leave);
    document.addEventListener('keydown', key);
    this.own(() => {
      dom.removeEventListener('wheel', wheel, { capture: true });
      document.removeEventListener('keydown', key);
    });
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

  /** The window shown now (ns). */
  private current(): [number, number] {
    return this.window ?? [0, this.data?.duration_ns ?? 0];
  }

  /** Zooms by `factor` (< 1: in) keeping the time at pixel `x` of the chart where it is. */
  private zoomAt(x: number, factor: number): void {
    const d = this.data;
    if (!d) return;
    const [a, b] = this.current();
    const at = this.lanes.convertFromPixel({ xAxisIndex: 1 }, x) as number;
    const t = Math.min(b, Math.max(a, Number.isFinite(at) ? at : (a + b) / 2));
    let f = factor;
    if ((b - a) * f < WINDOW_MIN) f = WINDOW_MIN / (b - a);
    let na = t - (t - a) * f;
    let nb = t + (b - t) * f;
    // Zooming out past an end of the trace: the window stops there (the anchor then moves).
    if (na < 0) {
      nb = Math.min(d.duration_ns, nb - na);
      na = 0;
    }
    if (nb > d.duration_ns) {
      na = Math.max(0, na - (nb - d.duration_ns));
      nb = d.duration_ns;
    }
    this.setWindow(na, nb);
  }

  /** Moves the window by `share` of its width (negative: earlier). */
  private pan(share: number): void {
    const d = this.data;
    if (!d) return;
    const [a, b] = this.current();
    const shift = Math.max(-a, Math.min(d.duration_ns - b, (b - a) * share));
    this.setWindow(a + shift, b + shift);
  }

  private setWindow(a: number, b: number): void {
    if (!(b > a)) return;
    this.window = [a, b];
    this.lanes.dispatchAction({ type: 'dataZoom', dataZoomIndex: 0, startValue: a, endValue: b });
    this.refetch();
  }

  /** A drag, the slider or our own zoom moved the window. */
  private onZoom(e: ZoomEvent): void {
    const d = this.data;
    if (!d) return;
    const z = e.batch?.[0] ?? e;
    let w: [number, number] | null = null;
    if (typeof z.startValue === 'number' && typeof z.endValue === 'number') w = [z.startValue, z.endValue];
    else if (typeof z.start === 'number' && typeof z.end === 'number') w = [(z.start / 100) * d.duration_ns, (z.end / 100) * d.duration_ns];
    if (!w) return;
    this.window = w;
    this.refetch();
  }

  private refetch(): void {
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.fetch(this.state()), 120);
  }

  private async fetch(s: State): Promise<void> {
    const w = this.window;
    const d = await this.load((signal) => api.timeline(w ? [Math.floor(w[0]), Math.ceil(w[1])] : null, this.width(), s.event, signal));
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
    // The window asked for last (a newer one than this answer's, while the wheel turns).
    const [za, zb] = this.window ?? [d.from_ns, d.to_ns];
    const zoom = { startValue: za, endValue: zb };
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
      graphic: [{ type: 'text', id: 'strip-title', left: 8, top: 6, style: { text: 'threads in the\nselected event', fontSize: 10, lineHeight: 13, fill: '#b91c1c' } }],
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
        { type: 'inside', xAxisIndex: [0, 1], filterMode: 'none', zoomOnMouseWheel: false, moveOnMouseWheel: false, ...zoom },
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
            const rect = {
              type: 'rect',
              shape: { x: x0, y: a[1] - h / 2, width: x1 - x0, height: h },
              style: { fill: colours[apiR.value(6)], opacity: apiR.value(7) ? 0.3 : 1, stroke: 'rgba(255,255,255,0.6)', lineWidth: x1 - x0 > 3 ? 0.5 : 0 },
            };
            // The name where it fits the slice (cut with "…"), never over its neighbours.
            const room = x1 - x0 - 2 * LABEL_PAD;
            const text = apiR.value(3) === 1 && room >= 12 && h >= 9 ? elide(name, room) : null;
            if (text === null) return rect;
            return {
              type: 'group',
              children: [
                rect,
                {
                  type: 'text',
                  silent: true,
                  style: { text, x: (x0 + x1) / 2, y: a[1], align: 'center', verticalAlign: 'middle', font: LABEL_FONT, fill: apiR.value(7) ? '#374151' : '#fff' },
                },
              ],
            };
          },
        },
      ],
    };
    this.lanes.setOption(option as unknown as echarts.EChartsOption, true);
  }
}

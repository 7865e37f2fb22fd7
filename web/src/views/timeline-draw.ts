// What the timeline draws from one /api/timeline answer: the rows (the lanes grouped by
// process, each process collapsible to one row), the slices with labels that never overlap
// (a name is drawn only inside its slice, cut with "…" to its width), the message lines
// between lanes (the server's reduced lines, thicker for more messages), the selected slice's
// outline, and the strip above the lanes: the threads inside the selected event, or else the
// slices starting per pixel over all lanes (where the trace is busiest, for any lane count).

import type * as echarts from 'echarts';
import type { TimelineResponse } from '../api/TimelineResponse';
import { durationUs, esc, shorten, threadName } from '../format';

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#a0cbe8'];

function colourOf(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(h) % PALETTE.length];
}

/** Nesting depths drawn per lane. */
export const DEPTHS = 12;
/** The plot's left edge (px): the lane labels' room. */
export const PLOT_LEFT = 150;
/** The font of the slices' labels (measured to fit them). */
const LABEL_FONT = '10px sans-serif';
/** Room left on each side of a label inside its slice (px). */
const LABEL_PAD = 3;

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

/** One row of the plot: a depth of a lane, or a collapsed process. */
export interface Row {
  /** Lane of the answer (index into `lanes`; a collapsed process: its first lane). */
  lane: number;
  depth: number;
  /** The process the lane belongs to. */
  group: string;
  /** A collapsed process's one row. */
  collapsed: boolean;
}

/** The rows of an answer and, per lane of the answer, the row of its depth 0. */
export interface Layout {
  rows: Row[];
  laneRow: number[];
  /** Lanes per process, in order of first appearance. */
  groups: Map<string, number[]>;
}

/** The collapsed processes of the state's `tcol` (`*` = all). */
export function isCollapsed(tcol: string, group: string): boolean {
  return tcol === '*' || tcol.split(',').includes(group);
}

/** `tcol` with `group` collapsed or expanded (`groups`: every process, for `*`). */
export function toggled(tcol: string, group: string, groups: Iterable<string>): string {
  const set = new Set(tcol === '*' ? groups : tcol.split(',').filter((g) => g !== ''));
  if (set.has(group)) set.delete(group);
  else set.add(group);
  return [...set].join(',');
}

/** Rows of `d`: lanes grouped by process (in the order the processes first appear), each
 * lane's depths (at most `DEPTHS`), or one row for a collapsed process. */
export function layout(d: TimelineResponse, tcol: string): Layout {
  const groups = new Map<string, number[]>();
  d.lanes.forEach((l, i) => {
    const g = groups.get(l.process);
    if (g) g.push(i);
    else groups.set(l.process, [i]);
  });
  const rows: Row[] = [];
  const laneRow = new Array<number>(d.lanes.length).fill(-1);
  for (const [group, lanes] of groups) {
    if (isCollapsed(tcol, group)) {
      for (const l of lanes) laneRow[l] = rows.length;
      rows.push({ lane: lanes[0], depth: 0, group, collapsed: true });
      continue;
    }
    for (const l of lanes) {
      laneRow[l] = rows.length;
      for (let k = 0; k < Math.max(1, Math.min(DEPTHS, d.lanes[l].depths)); k++) rows.push({ lane: l, depth: k, group, collapsed: false });
    }
  }
  return { rows, laneRow, groups };
}

/** The selected slice (`tsel`): lane of the trace, start, end (ns since the first event), depth. */
export interface Selected {
  lane: number;
  start: number;
  end: number;
  depth: number;
}

/** `tsel` read (null when absent). */
export function parseSelected(tsel: string | null): Selected | null {
  if (!tsel) return null;
  const [lane, start, end, depth] = tsel.split(':').map(Number);
  return { lane, start, end, depth };
}

/** What the option is drawn with besides the answer. */
export interface DrawInput {
  d: TimelineResponse;
  lay: Layout;
  /** The selected event's name (its slices stand out), or null. */
  selName: string | null;
  /** The selected thread `N.C.T` (its label stands out). */
  thread: string | null;
  selected: Selected | null;
  /** The window asked for last (ns). */
  window: [number, number];
}

const us = (ns: number) => durationUs(ns / 1000);

/** Tick labels of the time axis for a window `span_ns` wide: one unit for all ticks, with as
 * many decimals as tell ticks about a sixth of the window apart from each other. */
export function tickFormatter(spanNs: number): (v: number) => string {
  const [scale, unit] = spanNs >= 2e9 ? [1e9, 's'] : spanNs >= 2e6 ? [1e6, 'ms'] : spanNs >= 2e3 ? [1e3, 'µs'] : [1, 'ns'];
  const step = spanNs / 6 / scale;
  const decimals = Math.min(6, Math.max(0, Math.ceil(-Math.log10(step))));
  return (v: number) => `${(v / scale).toFixed(decimals)} ${unit}`;
}

/** The ECharts option of the timeline. */
export function timelineOption(inp: DrawInput): echarts.EChartsOption {
  const { d, lay, selName, selected } = inp;
  const { rows, laneRow } = lay;
  const labels = rows.map((r) => {
    const l = d.lanes[r.lane];
    const n = lay.groups.get(r.group)?.length ?? 1;
    if (r.collapsed) return shorten(`▸ ${r.group} (${n} lane${n > 1 ? 's' : ''})`, 24);
    // The first lane of a process carries its ▾ (a click on it collapses the process).
    return r.depth === 0 ? shorten(`${lay.groups.get(r.group)?.[0] === r.lane ? '▾' : ' '} ${l.thread}  ${l.label}`, 24) : '';
  });
  const colours: string[] = [];
  const colourIndex = new Map<string, number>();
  const items: { value: number[] }[] = [];
  d.lanes.forEach((l, li) => {
    const collapsed = rows[laneRow[li]]?.collapsed ?? false;
    for (let i = 0; i < l.start.length; i++) {
      if (l.depth[i] >= DEPTHS || (collapsed && l.depth[i] > 0)) continue;
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
      items.push({ value: [l.start[i], l.end[i], laneRow[li] + (collapsed ? 0 : l.depth[i]), l.merged[i], li, l.name[i], ci, dim ? 1 : 0] });
    }
  });
  // Message lines: [send, receive, sender row, receiver row, count].
  const f = d.flows;
  const lines: { value: number[] }[] = [];
  for (let i = 0; i < f.count.length; i++) {
    const a = laneRow[f.from_lane[i] - d.lanes_from];
    const b = laneRow[f.to_lane[i] - d.lanes_from];
    if (a === undefined || b === undefined || a < 0 || b < 0) continue;
    lines.push({ value: [f.from_ns[i], f.to_ns[i], a, b, f.count[i], f.from_lane[i] - d.lanes_from, f.to_lane[i] - d.lanes_from] });
  }
  const selRow = selected ? laneRow[selected.lane - d.lanes_from] : undefined;
  const selItem = selected && selRow !== undefined && selRow >= 0 ? [{ value: [selected.start, selected.end, selRow + (rows[selRow]?.collapsed ? 0 : Math.min(selected.depth, DEPTHS - 1))] }] : [];
  const strip = d.occupancy.length > 0;
  const flagged = d.flagged.length ? d.flagged.join(', ') : null;
  const px = (d.to_ns - d.from_ns) / d.width;
  const stripData = (strip ? d.occupancy : d.activity).map((v, i) => [d.from_ns + (i + 0.5) * px, v]);
  const stripMax = strip ? Math.max(1, d.lane_count) : Math.max(1, ...d.activity);
  const zoom = { startValue: inp.window[0], endValue: inp.window[1] };
  type Api = { value: (i: number) => number; coord: (v: number[]) => number[]; size: (v: number[]) => number[] };
  type Params = { coordSys: { x: number; y: number; width: number; height: number } };
  return {
    animation: false,
    tooltip: {
      formatter: ((p: { seriesId?: string; value?: number[] }) => {
        const v = p.value;
        if (!v) return '';
        if (p.seriesId === 'occupancy') return strip ? `${us(v[0])}: ${v[1].toFixed(2)} threads inside ${esc(flagged ?? '')}` : `${us(v[0])}: ${v[1]} slices start in this pixel (all ${d.lane_count} lanes)`;
        if (p.seriesId === 'flows') {
          const from = d.lanes[v[5]];
          const to = d.lanes[v[6]];
          return `<b>${v[4] > 1 ? `${v[4]} messages` : 'message'}</b> ${esc(threadName(from?.thread))} → ${esc(threadName(to?.thread))}<br/>sent ${us(v[0])}, received ${us(v[1])}${v[4] > 1 ? ' (means)' : ''}`;
        }
        if (p.seriesId === 'selected') return 'selected slice';
        const lane = d.lanes[v[4]];
        const name = d.names[v[5]] ?? '';
        return `<b>${esc(v[3] > 1 ? `${v[3]} intervals (shortest under a pixel), longest: ${name}` : name)}</b><br/>${esc(threadName(lane?.thread))} (${esc(lane?.label ?? '')})<br/>${us(v[0])} – ${us(v[1])}: ${us(v[1] - v[0])}`;
      }) as never,
    },
    graphic: [{ type: 'text', id: 'strip-title', left: 8, top: 6, style: { text: strip ? 'threads in the\nselected event' : 'slices per pixel,\nall lanes', fontSize: 10, lineHeight: 13, fill: '#b91c1c' } }],
    grid: [
      { left: PLOT_LEFT, right: 20, top: 6, height: 34 },
      { left: PLOT_LEFT, right: 20, top: 48, bottom: 40 },
    ],
    xAxis: [
      { type: 'value', gridIndex: 0, min: 0, max: d.duration_ns, show: false },
      { type: 'value', gridIndex: 1, min: 0, max: d.duration_ns, axisLabel: { formatter: tickFormatter(inp.window[1] - inp.window[0]), fontSize: 10, hideOverlap: true } },
    ],
    yAxis: [
      { type: 'value', gridIndex: 0, min: 0, max: stripMax, axisLabel: { fontSize: 9 }, splitNumber: 1 },
      {
        type: 'category',
        gridIndex: 1,
        inverse: true,
        data: labels,
        axisTick: { show: false },
        axisLabel: {
          fontSize: 10,
          // Every lane's label, those that would overlap hidden.
          interval: 0,
          hideOverlap: true,
          formatter: (v: string) => v,
          color: ((_v: string, i: number) => (d.lanes[rows[i]?.lane]?.thread === inp.thread ? '#b45309' : '#374151')) as never,
        },
      },
    ],
    dataZoom: [
      { type: 'inside', xAxisIndex: [0, 1], filterMode: 'none', zoomOnMouseWheel: false, moveOnMouseWheel: false, ...zoom },
      { type: 'slider', xAxisIndex: [0, 1], filterMode: 'none', height: 16, bottom: 6, ...zoom, labelFormatter: (v: number) => us(v) },
    ],
    series: [
      { id: 'occupancy', type: 'line', xAxisIndex: 0, yAxisIndex: 0, data: stripData, symbol: 'none', step: 'middle', lineStyle: { width: 1, color: '#b91c1c' }, areaStyle: { color: 'rgba(185,28,28,0.35)' } },
      {
        id: 'slices',
        type: 'custom',
        xAxisIndex: 1,
        yAxisIndex: 1,
        encode: { x: [0, 1], y: 2 },
        data: items,
        renderItem: ((params: Params, apiR: Api) => {
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
              { type: 'text', silent: true, style: { text, x: (x0 + x1) / 2, y: a[1], align: 'center', verticalAlign: 'middle', font: LABEL_FONT, fill: apiR.value(7) ? '#374151' : '#fff' } },
            ],
          };
        }) as never,
      },
      {
        id: 'flows',
        type: 'custom',
        xAxisIndex: 1,
        yAxisIndex: 1,
        encode: { x: [0, 1], y: [2, 3] },
        clip: true,
        z: 5,
        data: lines,
        renderItem: ((_params: Params, apiR: Api) => {
          const a = apiR.coord([apiR.value(0), apiR.value(2)]);
          const b = apiR.coord([apiR.value(1), apiR.value(3)]);
          const n = apiR.value(4);
          const width = Math.min(3.5, 0.8 + Math.log2(n) * 0.5);
          // An arrow head at the receiver, pointing along the line.
          const ang = Math.atan2(b[1] - a[1], b[0] - a[0]);
          const head = 4 + width;
          const p1 = [b[0] - head * Math.cos(ang - 0.45), b[1] - head * Math.sin(ang - 0.45)];
          const p2 = [b[0] - head * Math.cos(ang + 0.45), b[1] - head * Math.sin(ang + 0.45)];
          // Lines of many messages darker; single ones light, so that a dense overview stays
          // readable.
          const colour = `rgba(17,24,39,${Math.min(0.8, 0.35 + 0.1 * Math.log2(n))})`;
          return {
            type: 'group',
            children: [
              { type: 'line', shape: { x1: a[0], y1: a[1], x2: b[0], y2: b[1] }, style: { stroke: colour, lineWidth: width } },
              { type: 'polygon', shape: { points: [b, p1, p2] }, style: { fill: colour } },
            ],
          };
        }) as never,
      },
      {
        id: 'selected',
        type: 'custom',
        xAxisIndex: 1,
        yAxisIndex: 1,
        encode: { x: [0, 1], y: 2 },
        z: 6,
        silent: true,
        data: selItem,
        renderItem: ((params: Params, apiR: Api) => {
          const a = apiR.coord([apiR.value(0), apiR.value(2)]);
          const b = apiR.coord([apiR.value(1), apiR.value(2)]);
          const h = apiR.size([0, 1])[1] * 0.9;
          const cs = params.coordSys;
          // At least 6 px wide so that a slice under a pixel is still seen.
          const mid = (a[0] + b[0]) / 2;
          const half = Math.max(3, (b[0] - a[0]) / 2);
          const x0 = Math.max(mid - half, cs.x);
          const x1 = Math.min(mid + half, cs.x + cs.width);
          if (x1 <= x0) return null;
          return { type: 'rect', shape: { x: x0, y: a[1] - h / 2, width: x1 - x0, height: h }, style: { fill: 'none', stroke: '#b45309', lineWidth: 2.5 } };
        }) as never,
      },
    ],
  } as unknown as echarts.EChartsOption;
}

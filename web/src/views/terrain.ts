// 3D terrain (seed 001): events × threads × value as a surface, rotatable, with selectable
// X/Y resolution, and denotators: the k largest peaks labelled, with a legend. The selected
// event's row is drawn as a line across the terrain. A click on the surface selects the event
// and thread of the cell under the cursor (a peak: its event and thread); "from above" shows
// every peak.

import type * as echarts from 'echarts';
import 'echarts-gl';
import type { TerrainResponse } from '../api/TerrainResponse';
import { api } from '../client';
import { selectFor } from '../controls';
import { esc, shorten, threadName, threadTick, threadsNoun, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, axisChanged, store, touched } from '../state';
import { HOT } from './heatmap';

/** Axis names and labels of the 3-D views: dark and large enough to read; the padding keeps
 * echarts-gl from cutting the glyphs' tops and bottoms off (its label boxes are too small). */
export const AXIS_NAME = { fontSize: 13, color: '#111827', fontWeight: 'bold', padding: [4, 4], lineHeight: 18 };
export const AXIS_LABEL = { fontSize: 11, color: '#1f2937', padding: [3, 3], lineHeight: 16 };

/** Where data points of a chart's grid3D are on the screen: `[x, y, depth]` in the chart's
 * pixels (the coordinate system's world point through echarts-gl's camera); null when the chart
 * has no grid3D drawn. */
export function project3d(chart: echarts.ECharts, points: number[][]): [number, number, number][] | null {
  type Cs = { dataToPoint: (d: number[]) => number[]; viewGL: { camera: { viewMatrix: { array: ArrayLike<number> }; projectionMatrix: { array: ArrayLike<number> } }; viewport: { x: number; y: number; width: number; height: number } } };
  try {
    const model = (chart as unknown as { getModel: () => { getComponent: (t: string, i: number) => { coordinateSystem?: Cs } | undefined } }).getModel();
    const cs = model.getComponent('grid3D', 0)?.coordinateSystem;
    if (!cs?.viewGL?.camera) return null;
    const V = cs.viewGL.camera.viewMatrix.array;
    const P = cs.viewGL.camera.projectionMatrix.array;
    const vp = cs.viewGL.viewport;
    const mul = (M: ArrayLike<number>, v: number[]) => [0, 1, 2, 3].map((r) => M[r] * v[0] + M[4 + r] * v[1] + M[8 + r] * v[2] + M[12 + r] * v[3]);
    return points.map((d) => {
      const w = cs.dataToPoint(d);
      const c = mul(P, mul(V, [w[0], w[1], w[2], 1]));
      return [vp.x + ((c[0] / c[3] + 1) / 2) * vp.width, vp.y + ((1 - c[1] / c[3]) / 2) * vp.height, c[3]];
    });
  } catch {
    return null;
  }
}

/** Events × threads × value as a 3-D surface with its largest peaks labelled. */
export class TerrainView extends PanelView {
  private surface: echarts.ECharts;
  private data: TerrainResponse | null = null;
  private legend: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.surface = this.chart('terrain', this.body, {}, 2);
    this.legend = this.div('legend');
    this.tools.append(selectFor('tx', { owner: this, label: `X (${threadsNoun()})` }), selectFor('ty', { owner: this }), selectFor('peaks', { owner: this }), selectFor('tview', { owner: this }));
    // echarts-gl picks what the mouse is over (a ray through the surface, the peaks' points);
    // where it finds nothing (its points' pick boxes are off by a few pixels at some sizes),
    // the click's place picks among the drawn points projected on the screen.
    let picked = 0;
    this.surface.on('click', (p) => {
      const q = p as { seriesIndex?: number; dataIndex?: number };
      if (q.dataIndex === undefined || q.dataIndex < 0) return;
      const pick = q.seriesIndex === 0 ? this.cellAt(q.dataIndex) : q.seriesIndex === 1 ? this.peakAt(q.dataIndex) : null;
      if (!pick) return;
      picked = performance.now();
      store.set(pick);
    });
    this.surface.getZr().on('click', (e) => {
      const at = performance.now();
      window.setTimeout(() => {
        if (picked >= at - 1) return;
        const pick = this.pickAt(e.offsetX, e.offsetY);
        if (pick) store.set(pick);
      }, 0);
    });
  }

  /** What is drawn at pixel (x, y): the nearest peak within 10 px, else of the surface points
   * within reach, the one nearest the eye (the one seen there). */
  private pickAt(x: number, y: number): { event?: number; thread?: string } | null {
    const t = this.data;
    if (!t) return null;
    const peaks = project3d(this.surface, this.peakPoints);
    let best = -1;
    let bestD = 10;
    peaks?.forEach((p, i) => {
      const d = Math.hypot(p[0] - x, p[1] - y);
      if (d < bestD) {
        best = i;
        bestD = d;
      }
    });
    if (best >= 0) return this.peakAt(best);
    const cells = project3d(this.surface, this.cells);
    if (!cells) return null;
    // Reach: half the screen distance between neighbouring points near the click.
    let near = -1;
    let nearD = Infinity;
    cells.forEach((p, i) => {
      const d = Math.hypot(p[0] - x, p[1] - y);
      if (d < nearD) {
        near = i;
        nearD = d;
      }
    });
    if (near < 0 || nearD > 40) return null;
    const reach = Math.max(4, nearD * 1.5);
    let eye = -1;
    cells.forEach((p, i) => {
      if (Math.hypot(p[0] - x, p[1] - y) <= reach && (eye < 0 || p[2] < cells[eye][2])) eye = i;
    });
    return this.cellAt(eye);
  }

  /** The grid's surface points `[column, y, value]` as drawn (row `nr - 1 - y`). */
  private cells: number[][] = [];
  /** The peaks' points as drawn. */
  private peakPoints: number[][] = [];

  /** The selection a click on surface point `i` makes: the event and thread of the cell's
   * height (the server's `picks`: the largest value among the bins' events and threads). */
  private cellAt(i: number): { event?: number; thread?: string } | null {
    const g = this.data?.grid;
    const v = this.cells[i];
    if (!g || !v) return null;
    const r = g.rows.length - 1 - v[1];
    const pick = this.data?.picks[r * g.cols.length + v[0]];
    if (pick) return { event: pick.event, thread: pick.thread };
    const row = g.rows[r];
    const col = g.cols[v[0]];
    const out: { event?: number; thread?: string } = {};
    if (row?.event !== null && row?.event !== undefined) out.event = row.event;
    if (col?.thread) out.thread = col.thread;
    return Object.keys(out).length ? out : null;
  }

  private peakAt(i: number): { event: number; thread: string } | null {
    const p = this.data?.peaks[i];
    return p ? { event: p.event, thread: p.thread } : null;
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'rows', 'callpaths', 'tx', 'ty', 'peaks') || axisChanged(s, changed)) {
      const t = await this.load((signal) => api.terrain(s, signal));
      if (t === SUPERSEDED) return;
      this.data = t;
      await this.draw(this.state());
    } else if (touched(changed, 'event', 'tview')) {
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
    this.cells = surface;
    const u = g.unit;
    // Peaks float a little above the surface so that their neighbours do not hide them; a peak
    // whose cell holds a larger value (another event of its row bin) sits on top of that cell.
    const lift = (g.max ?? 0) * 0.04;
    const peaks = t.peaks.map((p, i) => ({ name: `${i + 1}`, value: [p.col_bin, yOf(p.row_bin), Math.max(p.value, g.values[p.row_bin * nc + p.col_bin] ?? 0) + lift] }));
    this.peakPoints = peaks.map((p) => p.value);
    const top = s.tview === 'top';
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
          const q = p as { seriesIndex?: number; dataIndex?: number };
          if (q.seriesIndex === 1) {
            const k = t.peaks[q.dataIndex ?? -1];
            return k ? `<b>peak ${(q.dataIndex ?? 0) + 1}</b><br/>event ${esc(k.name)}<br/>${esc(threadName(k.thread))}<br/><b>${value(k.value, u)}</b>` : '';
          }
          const v = q.seriesIndex === 0 ? surface[q.dataIndex ?? -1] : undefined;
          if (!v) return '';
          const row = g.rows[yOf(v[1])];
          const col = g.cols[v[0]];
          const events = row && row.first !== row.last ? `events ${row.first + 1}–${row.last + 1}` : 'event';
          return `${events} ${esc(row?.label ?? '')}<br/>${esc(threadName(col?.label))}<br/><b>${value(v[2], u)}</b><br/><small>click: select${row?.first === row?.last && col?.thread ? '' : ' its highest event and thread'}</small>`;
        },
      },
      visualMap: { show: false, dimension: 2, min: 0, max: g.max ?? 1, inRange: { color: HOT }, seriesIndex: 0 },
      // A tick names its bin's first thread: `640` on an axis of ranks (one thread per rank).
      xAxis3D: { type: 'value', name: threadsNoun(), nameTextStyle: AXIS_NAME, min: 0, max: Math.max(1, nc - 1), axisLabel: { formatter: (v: number) => threadTick(g.cols[Math.round(v)]?.label.split(' ')[0]), textStyle: AXIS_LABEL } },
      yAxis3D: { type: 'value', name: 'events (largest at the back)', nameTextStyle: AXIS_NAME, min: 0, max: Math.max(1, nr - 1), axisLabel: { show: false } },
      // From above the value axis points at the eye: its labels would pile up (the colour and the
      // tooltip give the value). The axis is named by the value shown: its ticks carry the units
      // (ms, s), so the metric's base unit there would contradict them; the 0 tick is not
      // labelled, where it would sit on the thread axis's first label.
      zAxis3D: { type: 'value', name: top ? '' : s.kind, nameGap: 36, nameTextStyle: AXIS_NAME, axisLabel: { show: !top, formatter: (v: number) => (v === 0 ? '' : value(v, u)), textStyle: AXIS_LABEL } },
      grid3D: {
        boxWidth: 120,
        boxDepth: 90,
        boxHeight: 50,
        // From the front (small events near, the largest at the back), high enough to see over
        // the ridges; from above every peak shows.
        viewControl: top ? { projection: 'orthographic', orthographicSize: 125, alpha: 90, beta: 0 } : { alpha: 38, beta: 20, distance: 185 },
        light: { main: { intensity: 1.1, shadow: false }, ambient: { intensity: 0.35 } },
      },
      series: [
        { type: 'surface', data: surface, shading: 'lambert', wireframe: { show: nr * nc < 6000, lineStyle: { width: 0.5, color: 'rgba(0,0,0,0.25)' } } },
        {
          type: 'scatter3D',
          data: peaks,
          symbolSize: 9,
          itemStyle: { color: '#111' },
          label: { show: true, distance: 4, formatter: (p: { name: string }) => p.name, textStyle: { fontSize: 14, fontWeight: 'bold', color: '#111', backgroundColor: 'rgba(255,255,255,0.85)', padding: 2 } },
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

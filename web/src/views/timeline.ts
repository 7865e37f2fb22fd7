// Timeline of a trace, as users of Perfetto and Vampir expect it: one lane per thread (its
// intervals by nesting depth), lanes grouped by process (a click on a process's label
// collapses it to one row), message lines between lanes, zoom (wheel, W/S: the time under
// the cursor stays under it) and pan (drag, A/D, or the slider), search by name (Enter: next,
// Shift+Enter: previous; the match selected and the window moved to it), all answered at
// screen resolution by /api/timeline and /api/timeline/search (runs of intervals shorter than
// a pixel come as one grey box; messages in the same pixels as one thicker line). The window
// (`tw`), the selected slice (`tsel`), the search (`tq`) and the collapsed processes (`tcol`)
// are kept in the URL. Above the lanes, the seed's merged timeline of flagged events (how many
// threads are inside the selected event), or with no event selected the slices starting per
// pixel over all lanes. What is drawn: ./timeline-draw.ts.

import type * as echarts from 'echarts';
import type { TimelineResponse } from '../api/TimelineResponse';
import type { TimelineSearchResponse } from '../api/TimelineSearchResponse';
import { api, TIMELINE_LANES } from '../client';
import { charts } from '../context';
import { durationUs, esc, shorten } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { type Layout, PLOT_LEFT, layout, parseSelected, timelineOption, toggled } from './timeline-draw';

export { elide } from './timeline-draw';

/** One wheel step or W/S press zooms by this factor (in) or its inverse (out). */
const ZOOM_STEP = 0.8;
/** A/D pan by this share of the window. */
const PAN_STEP = 0.15;
/** The narrowest window (ns). */
const WINDOW_MIN = 1000;

/** What ECharts' `datazoom` event carries (a window in values or in percent). */
interface ZoomRange {
  start?: number;
  end?: number;
  startValue?: number;
  endValue?: number;
}
type ZoomEvent = ZoomRange & { batch?: ZoomRange[] };

/** The window of `tw` (`from-to`, ns), or null. */
function parseWindow(tw: string | null): [number, number] | null {
  if (!tw) return null;
  const [a, b] = tw.split('-').map(Number);
  return b > a ? [a, b] : null;
}

/** The trace's lanes over time with message lines, search and the summary strip. */
export class TimelineView extends PanelView {
  private lanes: echarts.ECharts;
  private data: TimelineResponse | null = null;
  private window: [number, number] | null;
  private timer: number | undefined;
  private info: HTMLDivElement;
  private lay: Layout = { rows: [], laneRow: [], groups: new Map() };
  private searchBox: HTMLInputElement;
  private searchCount: HTMLSpanElement;
  private laneRange: HTMLSpanElement;
  private found: TimelineSearchResponse | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.window = parseWindow(store.get().tw);
    this.info = this.div();
    this.lanes = this.chart('timeline', this.body, { top: '26px' });
    this.lanes.on('datazoom', (e) => this.onZoom(e as ZoomEvent));
    // Search: a text box, previous / next, and "3 of 17".
    this.searchBox = document.createElement('input');
    this.searchBox.type = 'search';
    this.searchBox.className = 'timeline-search';
    this.searchBox.placeholder = 'search slices';
    this.searchBox.title = 'search slices by name (Enter: next, Shift+Enter: previous)';
    this.searchBox.value = store.get().tq;
    this.searchBox.size = 14;
    const prev = document.createElement('button');
    prev.textContent = '◀';
    prev.title = 'previous match (Shift+Enter)';
    prev.className = 'timeline-prev';
    const next = document.createElement('button');
    next.textContent = '▶';
    next.title = 'next match (Enter)';
    next.className = 'timeline-next';
    this.searchCount = document.createElement('span');
    this.searchCount.className = 'timeline-found';
    const all = document.createElement('button');
    all.textContent = '▸▾';
    all.title = 'collapse or expand every process';
    all.className = 'timeline-collapse';
    all.addEventListener('click', () => store.set({ tcol: store.get().tcol === '*' ? '' : '*' }));
    // Lanes 64 at a time: earlier / later lanes, and which are shown.
    const up = document.createElement('button');
    up.textContent = '▲';
    up.title = 'the previous lanes';
    up.className = 'timeline-lanes-up';
    up.addEventListener('click', () => store.set({ tl0: Math.max(0, store.get().tl0 - TIMELINE_LANES) }));
    const down = document.createElement('button');
    down.textContent = '▼';
    down.title = 'the next lanes';
    down.className = 'timeline-lanes-down';
    down.addEventListener('click', () => {
      const n = this.data?.lane_count ?? 0;
      const next = store.get().tl0 + TIMELINE_LANES;
      if (next < n) store.set({ tl0: next });
    });
    this.laneRange = document.createElement('span');
    this.laneRange.className = 'timeline-lanes';
    this.tools.append(this.searchBox, prev, next, this.searchCount, up, this.laneRange, down, all);
    this.searchBox.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      this.search(e.shiftKey ? 'prev' : 'next');
    });
    prev.addEventListener('click', () => this.search('prev'));
    next.addEventListener('click', () => this.search('next'));
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
    // A click on a lane's label (left of the plot) collapses or expands its process.
    this.lanes.getZr().on('click', (e: { offsetX: number; offsetY: number }) => {
      if (e.offsetX >= PLOT_LEFT || !this.data) return;
      const idx = this.lanes.convertFromPixel({ yAxisIndex: 1 }, e.offsetY) as unknown as number;
      const row = this.lay.rows[Math.round(idx)];
      if (!row || (row.depth !== 0 && !row.collapsed)) return;
      store.set({ tcol: toggled(store.get().tcol, row.group, this.lay.groups.keys()) });
    });
    this.lanes.on('click', (p) => {
      const d = (p as { data?: { value?: number[] }; seriesId?: string }).data?.value;
      if ((p as { seriesId?: string }).seriesId !== 'slices' || !d || !this.data) return;
      const lane = this.data.lanes[d[4]];
      const name = this.data.names[d[5]];
      if (!lane || name === undefined) return;
      const tsel = d[3] === 1 ? `${this.data.lanes_from + d[4]}:${Math.round(d[0])}:${Math.round(d[1])}:${d[2] - (this.lay.laneRow[d[4]] ?? 0)}` : null;
      this.ctx.events({ ...store.get(), callpaths: false }).then((ev) => {
        const row = ev.rows.find((r) => r.name === name);
        store.set({ thread: lane.thread, tsel, ...(row ? { event: row.id } : {}) });
      });
    });
    this.own(() => clearTimeout(this.timer));
  }

  protected onResize(): void {
    this.fetch(this.state());
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    // A window from the URL (Back, a shared session) that is not the one shown.
    if (changed.has('tw')) {
      const w = parseWindow(s.tw);
      const cur = this.window;
      if (w ? !cur || Math.abs(w[0] - cur[0]) > 1 || Math.abs(w[1] - cur[1]) > 1 : cur !== null) {
        this.window = w;
        await this.fetch(s);
        return;
      }
    }
    if (touched(changed, 'event', 'metric', 'tl0')) await this.fetch(s);
    else if (touched(changed, 'thread', 'tsel', 'tcol')) this.draw(s);
    if (changed.has('tq') && this.searchBox.value !== s.tq) this.searchBox.value = s.tq;
  }

  /** Width of the plot in pixels. */
  private width(): number {
    return Math.max(100, this.lanes.getWidth() - PLOT_LEFT - 20);
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

  /** The window in the URL: `from-to` in whole ns (the whole trace: none). */
  private mirrorWindow(): void {
    const w = this.window;
    const d = this.data;
    const whole = !w || (d !== null && w[0] <= 0 && w[1] >= d.duration_ns);
    store.set({ tw: whole || !w ? null : `${Math.floor(w[0])}-${Math.ceil(w[1])}` });
  }

  private async fetch(s: State): Promise<void> {
    const w = this.window;
    const d = await this.load((signal) => api.timeline(w ? [Math.floor(w[0]), Math.ceil(w[1])] : null, this.width(), s.event, s.tl0, signal));
    if (d === SUPERSEDED) return;
    this.data = d;
    const last = d.lanes_from + d.lanes.length;
    this.laneRange.textContent = d.lane_count > d.lanes.length ? `lanes ${d.lanes_from}–${last - 1} of ${d.lane_count}` : '';
    charts.set('timeline-data', d);
    this.draw(this.state());
    this.mirrorWindow();
  }

  /** Walks the search to the next or previous match: selects it and moves the window to it
   * (centred on it, zoomed in if it would be under a twentieth of the window; a slice wider
   * than half the window: the window fits it). */
  private async search(dir: 'next' | 'prev'): Promise<void> {
    const q = this.searchBox.value.trim();
    store.set({ tq: q });
    if (!q) {
      this.searchCount.textContent = '';
      return;
    }
    const sel = parseSelected(store.get().tsel);
    const hitNow = this.found?.q === q ? this.found.hit : null;
    // From the selected slice when it is the current match (else the first / last match).
    const at = hitNow && sel && sel.lane === hitNow.lane && sel.start === Math.round(hitNow.start_ns) ? { at_ns: hitNow.start_ns, lane: hitNow.lane } : {};
    const r = await this.load((signal) => api.timelineSearch({ q, dir, ...at }, signal), 'search');
    if (r === SUPERSEDED) return;
    this.found = r;
    charts.set('timeline-search', r);
    const h = r.hit;
    this.searchCount.textContent = h ? `${h.position} of ${r.total}` : 'no match';
    this.searchCount.title = h ? `${esc(h.name)} on ${h.thread} (${r.names} matching name${r.names === 1 ? '' : 's'})` : `no slice name contains "${q}"`;
    if (!h) return;
    const d = this.data;
    const [a, b] = this.current();
    const len = h.end_ns - h.start_ns;
    // A match too short to be seen at this zoom: zoomed in until it is a twentieth of the
    // window (never out, unless it is wider than half the window).
    const span = Math.min(b - a, Math.max(len * 20, WINDOW_MIN));
    let na: number;
    let nb: number;
    if (len > span / 2) {
      na = h.start_ns - len * 0.1;
      nb = h.end_ns + len * 0.1;
    } else {
      const mid = (h.start_ns + h.end_ns) / 2;
      na = mid - span / 2;
      nb = mid + span / 2;
    }
    if (d) {
      const dur = d.duration_ns;
      if (na < 0) [na, nb] = [0, Math.min(dur, nb - na)];
      if (nb > dur) [na, nb] = [Math.max(0, na - (nb - dur)), dur];
    }
    // A match on a lane not shown: the page of lanes holding it.
    const l0 = store.get().tl0;
    const page = h.lane >= l0 && h.lane < l0 + TIMELINE_LANES ? {} : { tl0: Math.floor(h.lane / TIMELINE_LANES) * TIMELINE_LANES };
    store.set({ thread: h.thread, tsel: `${h.lane}:${Math.round(h.start_ns)}:${Math.round(h.end_ns)}:${h.depth}`, ...page });
    this.setWindow(Math.max(0, na), nb);
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    this.lay = layout(d, s.tcol);
    const us = (ns: number) => durationUs(ns / 1000);
    const flagged = d.flagged.length ? d.flagged.join(', ') : null;
    const f = d.flows;
    const lines = f.count.length;
    const msgs =
      f.total > 0
        ? ` · ${f.messages} message${f.messages === 1 ? '' : 's'} in the window as ${lines} line${lines === 1 ? '' : 's'}${f.reduced > 0 ? ` (${f.reduced} merged)` : ''}${f.outside_lanes > 0 ? `, ${f.outside_lanes} to lanes not shown` : ''}`
        : '';
    const strip = flagged ? `top strip: threads inside <b>${esc(shorten(flagged, 40))}</b>` : 'top strip: slices starting per pixel, all lanes';
    this.info.innerHTML = `${d.lane_count} threads · ${us(d.duration_ns)} · window ${us(d.from_ns)} – ${us(d.to_ns)}${msgs} · ${strip}`;
    this.info.dataset.messages = String(f.messages);
    const option = timelineOption({
      d,
      lay: this.lay,
      selName: s.event === null ? null : d.flagged[0] ?? null,
      thread: s.thread,
      selected: parseSelected(s.tsel),
      // The window asked for last (a newer one than this answer's, while the wheel turns).
      window: this.window ?? [d.from_ns, d.to_ns],
    });
    this.lanes.setOption(option, true);
  }
}

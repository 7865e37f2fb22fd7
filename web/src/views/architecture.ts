// Architecture view (the FPGA paper's Fig. 2): the run's processes as nodes on a grid, each a
// donut of its threads' time per category, and the channels between them as arrows whose
// width grows with the bytes sent, labelled with the transfer statistics of the largest. Up to
// 64 processes are drawn one by one; more are grouped (by host, else in blocks of ranks). A click
// on a node selects its (first) rank; hovering an arrow tells messages, bytes and sizes.

import type * as echarts from 'echarts';
import type { ArchitectureResponse } from '../api/ArchitectureResponse';
import { api } from '../client';
import { count, esc, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { categoryColours } from './categories';

/** Processes and channels as a grid of donuts and arrows. */
export class ArchitectureView extends PanelView {
  private chartEl: echarts.ECharts;
  private note: HTMLDivElement;
  private data: ArchitectureResponse | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.note = this.div();
    this.chartEl = this.chart('architecture', this.body, { top: '22px' });
    this.chartEl.on('click', (p) => {
      const d = this.data;
      const i = (p as { seriesType?: string; dataIndex?: number; seriesName?: string; data?: { process?: number } }).data?.process;
      if (!d || i === undefined) return;
      const proc = d.processes[i];
      if (proc) store.set({ thread: `${proc.first_rank}.0.0` });
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'sample', 'mode') || !this.data) {
      const d = await this.load((signal) => api.architecture(s, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
    }
    this.draw(this.state());
  }

  protected onResize(): void {
    this.draw(this.state());
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const n = d.processes.length;
    const grouped = d.grouped_by === 'rank' ? `${n} processes` : `${d.processes_all.toLocaleString('en-US')} processes in ${n} groups (by ${d.grouped_by})`;
    const within = d.within_bytes > 0 ? ` · ${value(d.within_bytes, 'B')} within nodes, not drawn` : '';
    this.note.innerHTML = `${esc(grouped)}; donuts: time per category, arrows: bytes sent${esc(within)}`;
    if (n === 0) {
      this.chartEl.clear();
      return;
    }
    const box = this.chartEl.getDom().getBoundingClientRect();
    const w = Math.max(100, box.width);
    const h = Math.max(100, box.height);
    // Processes on a grid in rank order (row by row), as wide as the panel allows: neighbours
    // in rank are neighbours on the page, so a stencil's halo exchanges are short arrows.
    const top = 34;
    const cols = Math.max(1, Math.min(n, Math.round(Math.sqrt((n * w) / (h - top)))));
    const rows = Math.ceil(n / cols);
    const cell = Math.min(w / cols, (h - top - 8) / rows);
    const r = Math.max(6, Math.min(40, cell * 0.3));
    const x0 = (w - cell * cols) / 2 + cell / 2;
    const y0 = top + cell / 2;
    const at = (i: number): [number, number] => [x0 + (i % cols) * cell, y0 + Math.floor(i / cols) * cell];
    // The categories panel's colours: a category looks the same in both.
    const palette = categoryColours(d);
    const maxBytes = Math.max(1, ...d.channels.map((c) => c.bytes));
    const selected = s.thread ? Number(s.thread.split('.')[0]) : null;
    const labelled = new Set(d.channels.slice(0, Math.min(24, Math.max(4, 48 - n))).map((c) => `${c.from}-${c.to}`));
    const graph = {
      type: 'graph',
      layout: 'none',
      coordinateSystem: null,
      // The graph fits its nodes into this box: the grid's own, margins kept.
      left: x0,
      top: y0,
      width: Math.max(1, (Math.min(n, cols) - 1) * cell),
      height: Math.max(1, (rows - 1) * cell),
      silent: false,
      z: 1,
      symbolSize: 2 * r,
      itemStyle: { color: 'transparent' },
      label: { show: false },
      edgeSymbol: ['none', 'arrow'],
      edgeSymbolSize: 7,
      data: d.processes.map((p, i) => {
        const [x, y] = at(i);
        return { name: p.label, x, y, process: i, fixed: true };
      }),
      links: d.channels.map((c) => ({
        source: c.from,
        target: c.to,
        value: c.bytes,
        // Two directions between grid neighbours bend apart; longer edges bend little.
        lineStyle: { width: 0.8 + 5 * Math.sqrt(c.bytes / maxBytes), curveness: Math.abs(c.from - c.to) === 1 && Math.floor(c.from / cols) === Math.floor(c.to / cols) ? 0.25 : 0.06, opacity: 0.5, color: '#475569' },
        label: {
          show: labelled.has(`${c.from}-${c.to}`) && n <= 16,
          formatter: () => `${value(c.bytes, 'B')}`,
          fontSize: 9,
        },
        tooltip: {
          formatter: () =>
            `${esc(d.processes[c.from].label)} → ${esc(d.processes[c.to].label)}<br/><b>${value(c.bytes, 'B')}</b> in ${count(c.messages)} messages<br/>mean ${value(c.mean_bytes, 'B')}, min ${value(c.min_bytes, 'B')}, max ${value(c.max_bytes, 'B')}`,
        },
      })),
    };
    // The graph fits its nodes into its box: the donuts and names go where it drew them.
    this.chartEl.setOption({ animation: false, series: [graph] }, true);
    const pos = d.processes.map((_, i) => {
      const px = this.chartEl.convertToPixel({ seriesIndex: 0 }, at(i)) as unknown as number[] | undefined;
      return px && Number.isFinite(px[0]) ? ([px[0], px[1]] as [number, number]) : at(i);
    });
    const pies = d.processes.map((p, i) => {
      const [x, y] = pos[i];
      const sel = selected !== null && selected >= p.first_rank && selected <= p.last_rank;
      return {
        type: 'pie',
        name: p.label,
        z: 3,
        center: [x, y],
        radius: [r * 0.45, r],
        label: { show: false },
        itemStyle: sel ? { borderColor: '#111', borderWidth: 2 } : { borderColor: 'transparent' },
        tooltip: {
          formatter: (q: unknown) => {
            const k = q as { name: string; value: number; percent: number };
            return `<b>${esc(p.label)}</b> (${p.threads} threads)<br/>${esc(k.name)}: ${value(k.value, d.unit)} (${k.percent.toFixed(1)}%)<br/>sent ${value(p.bytes_sent, 'B')}, received ${value(p.bytes_received, 'B')}<br/><small>click: select ${p.ranks > 1 ? 'its first rank' : 'the rank'}</small>`;
          },
        },
        data: d.categories.map((c, k) => ({ name: c.name, value: p.categories[k], process: i, itemStyle: { color: palette[k] } })),
      };
    });
    const names =
      r >= 9
        ? d.processes.map((p, i) => {
            const [x, y] = pos[i];
            return {
              type: 'text',
              z: 4,
              x,
              y,
              style: { text: p.label.replace(/^ranks? /, ''), fontSize: r >= 16 ? 10 : 8, fill: '#475569', align: 'center', verticalAlign: 'middle' },
            };
          })
        : [];
    this.chartEl.setOption(
      {
        animation: false,
        tooltip: { trigger: 'item', confine: true },
        legend: { top: 0, left: 'center', data: d.categories.map((c) => c.name), itemWidth: 10, itemHeight: 10, textStyle: { fontSize: 11 } },
        graphic: names,
        series: [graph, ...pies],
      },
      true,
    );
  }
}

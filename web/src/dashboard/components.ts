// The components of a dashboard's SQL panels: each turns the rows of the panel's query and the
// panel's parameters (x, y, low, high, value, bins, stacked, horizontal, donut, log) into an
// ECharts option (bars, lines, histogram, scatter, pie, heatmap) or HTML (table), and says which
// row a clicked datum came from (the panel's `select` then sets the selection from that row).
//
// A new component: its name in the server's `Component` enum (src/api/Component.ts, generated),
// then one entry in COMPONENTS below (web/README.md, "Dashboards").

import type * as echarts from 'echarts';
import type { Component } from '../api/Component';
import type { DashboardPanel } from '../api/DashboardPanel';
import type { SqlAnswer } from '../api/SqlAnswer';
import { esc } from '../format';
import { HOT } from '../views/heatmap';

/** One value of an answer's row. */
export type Cell = number | string | boolean | null;

/** A query's answer, its columns found by name. */
export class Rows {
  readonly names: string[];
  readonly rows: Cell[][];
  readonly truncated: boolean;
  readonly elapsedMs: number;
  private numeric: boolean[];

  constructor(answer: SqlAnswer) {
    this.names = answer.columns.map((c) => c.name);
    this.rows = answer.rows;
    this.truncated = answer.truncated;
    this.elapsedMs = answer.elapsed_ms;
    this.numeric = answer.columns.map((c) => /^(U?Int|Float|Decimal)/.test(c.data_type));
  }

  /** The index of column `name` (parameter `param` of the panel names it); an error naming the
   * answer's columns when it is not one of them. */
  col(name: string | null | undefined, param: string): number {
    if (name === null || name === undefined || name === '') throw new Error(`this component needs the parameter \`${param}\` (a column of the query: ${this.names.join(', ')})`);
    const i = this.names.indexOf(name);
    if (i < 0) throw new Error(`\`${param} = "${name}"\`: the query has no column \`${name}\` (its columns: ${this.names.join(', ')})`);
    return i;
  }

  /** True when column `i` holds numbers. */
  isNumeric(i: number): boolean {
    return this.numeric[i];
  }

  /** The value columns: those named by `y`, else every numeric column but `except`. */
  values(y: readonly string[], except: number[] = []): number[] {
    if (y.length) return y.map((n) => this.col(n, 'y'));
    const all = this.names.map((_, i) => i).filter((i) => this.numeric[i] && !except.includes(i));
    if (!all.length) throw new Error(`this component needs a numeric column in \`y\` (the query's columns: ${this.names.join(', ')})`);
    return all;
  }
}

/** A number of a cell (integers beyond 2^53 come as text), or null. */
export function num(v: Cell): number | null {
  if (v === null || typeof v === 'boolean') return null;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : null;
}

/** A cell as text: numbers with thousands separators and at most 4 significant digits below
 * 1000 (never in exponent form between 0.001 and 10^15). */
export function cellText(v: Cell): string {
  if (v === null) return '–';
  if (typeof v !== 'number') return String(v);
  const a = Math.abs(v);
  if (Number.isInteger(v) && a < 1e15) return v.toLocaleString('en-US');
  if (a >= 1e15 || (a < 1e-3 && a > 0)) return v.toExponential(2);
  if (a >= 100) return v.toLocaleString('en-US', { maximumFractionDigits: 1 });
  return v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}

/** A short number for axes: 1.2k, 3.4M, 5G, 0.25, 1e-5. */
export function short(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  const trim = (x: number) => String(Number(x.toPrecision(3)));
  if (a >= 1e12) return v.toExponential(1);
  if (a >= 1e9) return `${trim(v / 1e9)}G`;
  if (a >= 1e6) return `${trim(v / 1e6)}M`;
  if (a >= 1e4) return `${trim(v / 1e3)}k`;
  if (a < 1e-3) return v.toExponential(0);
  return trim(v);
}

/** `text` cut from its start to at most `max` characters (a callpath keeps its leaf, the routine). */
export function cutStart(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}

/** A name cut to at most `max` characters so that its routine stays visible: a callpath
 * (`a => b => routine`) is cut from its start, and a routine longer than that (a TAU name
 * with its signature, `routine void (double *, int)`) keeps its start, where its name is. */
export function cutName(text: string, max: number): string {
  if (text.length <= max) return text;
  const at = text.lastIndexOf(' => ');
  const leaf = at >= 0 ? text.slice(at + 4) : text;
  if (at >= 0 && leaf.length + 1 <= max) return cutStart(text, max);
  const head = leaf.slice(0, Math.max(1, max - (at >= 0 ? 2 : 1)));
  return `${at >= 0 ? '…' : ''}${head}…`;
}

/** Text of a category (a bar's, a slice's, a cell's row or column). */
function label(v: Cell): string {
  return v === null ? '(null)' : typeof v === 'number' ? cellText(v) : String(v);
}

/** Width in pixels of `n` characters of 11 px labels (a generous estimate). */
const charPx = (n: number) => n * 6.4;

/** Where a chart is drawn: its size in pixels. */
export interface Size {
  width: number;
  height: number;
}

/** The payload of an ECharts click, as components read it. */
export interface Clicked {
  dataIndex: number;
  seriesIndex?: number;
  data?: unknown;
}

/** What a chart component makes of the rows. */
export interface Drawing {
  option: echarts.EChartsOption;
  /** The row of a clicked datum (null: none). */
  rowOf(p: Clicked): number | null;
  /** The row at a click on the plot's empty space (lines: the nearest x), if any. */
  rowAt?(chart: echarts.ECharts, point: [number, number]): number | null;
}

/** A component drawn with ECharts. */
export interface ChartComponent {
  kind: 'chart';
  draw(p: DashboardPanel, rows: Rows, size: Size): Drawing;
}

/** What an HTML component may do in its panel. */
export interface HtmlHost {
  /** Where it draws (emptied by the component). */
  el: HTMLElement;
  /** Sets the selection from row `row` (the panel's `select`). */
  pick(row: number): void;
  /** True when row `row` is the selection (its `select` columns hold the selected values). */
  selected(row: number): boolean;
  /** The table's sort, kept across redraws: a column index and its direction. */
  sort: { col: number | null; desc: boolean };
}

/** A component drawn as HTML. */
export interface HtmlComponent {
  kind: 'html';
  draw(p: DashboardPanel, rows: Rows, host: HtmlHost): void;
}

/** Colours of the lines (the band is light blue). */
const PALETTE = ['#2563eb', '#dc2626', '#059669', '#f59e0b', '#7c3aed', '#0891b2', '#db2777', '#65a30d'];

const TOOLTIP = { confine: true, textStyle: { fontSize: 12 }, extraCssText: 'max-width: 480px; white-space: normal;' };
// Text colours come from the page's chart theme (light or dark: src/page.ts).
const AXIS_LABEL = { fontSize: 11 };
const NAME_STYLE = { fontSize: 11 };

/** A value axis (logarithmic with `log`). */
function valueAxis(log: boolean, name = ''): Record<string, unknown> {
  return { type: log ? 'log' : 'value', name, nameTextStyle: NAME_STYLE, axisLabel: { ...AXIS_LABEL, formatter: (v: number) => short(v) } };
}

/** A value for a chart: null for a missing value, and for values a log axis cannot show. */
function plotted(v: Cell, log: boolean): number | null {
  const n = num(v);
  return n === null || (log && n <= 0) ? null : n;
}

/** A legend over the plot when there are several series. */
function legend(names: string[]): Record<string, unknown> | undefined {
  return names.length > 1 ? { top: 0, type: 'scroll', textStyle: { fontSize: 11 }, data: names } : undefined;
}

/** The lines of a tooltip listing a row's columns. */
function rowTooltip(rows: Rows, row: number): string {
  const r = rows.rows[row];
  if (!r) return '';
  return rows.names
    .slice(0, 14)
    .map((n, i) => `${esc(n)}: <b>${esc(cutStart(label(r[i]), 90))}</b>`)
    .join('<br/>');
}

/** Bars: categories from `x`, one series per `y` column; horizontal, stacked, log. Long
 * category names are cut from their start (the routine at the end stays); the tooltip has
 * the full name. */
const bars: ChartComponent = {
  kind: 'chart',
  draw(p, rows, size) {
    const xi = rows.col(p.x, 'x');
    const ys = rows.values(p.y, [xi]);
    const cats = rows.rows.map((r) => label(r[xi]));
    const names = ys.map((i) => rows.names[i]);
    const top = names.length > 1 ? 30 : 14;
    let grid: Record<string, number>;
    let catAxis: Record<string, unknown>;
    if (p.horizontal) {
      const max = Math.max(8, Math.min(64, Math.floor((size.width * 0.4) / 6.4)));
      const longest = Math.max(1, ...cats.map((c) => Math.min(c.length, max)));
      grid = { left: Math.round(charPx(longest) + 14), right: 24, top, bottom: 28 };
      catAxis = { type: 'category', data: cats, inverse: true, axisTick: { show: false }, axisLabel: { ...AXIS_LABEL, formatter: (v: string) => cutName(v, max) } };
    } else {
      const plotW = Math.max(50, size.width - 90);
      const rotate = cats.length * charPx(Math.min(18, Math.max(...cats.map((c) => c.length), 1))) > plotW ? 40 : 0;
      const max = rotate ? Math.max(6, Math.min(40, Math.floor((size.height * 0.38) / 6.4 / 0.64))) : Math.max(4, Math.floor(plotW / Math.max(1, cats.length) / 6.4));
      const longest = Math.max(1, ...cats.map((c) => Math.min(c.length, max)));
      // Rotated labels need about 18 px of axis each: show every n-th.
      const every = rotate ? Math.max(1, Math.ceil((cats.length * 18) / plotW)) : 0;
      grid = { left: 64, right: 24, top, bottom: rotate ? Math.round(charPx(longest) * 0.66 + 16) : 30 };
      catAxis = {
        type: 'category',
        data: cats,
        axisTick: { alignWithLabel: true, interval: rotate ? every - 1 : 'auto' },
        axisLabel: { ...AXIS_LABEL, rotate, interval: rotate ? every - 1 : 'auto', hideOverlap: true, formatter: (v: string) => cutName(v, max) },
      };
    }
    const series = ys.map((i) => ({
      name: rows.names[i],
      type: 'bar',
      data: rows.rows.map((r) => plotted(r[i], p.log)),
      stack: p.stacked ? 'total' : undefined,
      barMaxWidth: 48,
      cursor: 'pointer',
    }));
    const option = {
      animation: false,
      grid,
      legend: legend(names),
      tooltip: {
        ...TOOLTIP,
        trigger: 'axis',
        axisPointer: { type: 'shadow' },
        formatter: (ps: unknown) => {
          const arr = ps as { dataIndex: number; marker: string; seriesName: string; value: number | null }[];
          const i = arr[0]?.dataIndex ?? 0;
          return `<b>${esc(cats[i] ?? '')}</b><br/>${arr.map((q) => `${q.marker}${esc(q.seriesName)}: <b>${cellText(q.value)}</b>`).join('<br/>')}`;
        },
      },
      xAxis: p.horizontal ? valueAxis(p.log) : catAxis,
      yAxis: p.horizontal ? catAxis : valueAxis(p.log),
      series,
    };
    return { option: option as echarts.EChartsOption, rowOf: (c) => c.dataIndex };
  },
};

/** Lines: x from `x` (a value axis for numbers, categories otherwise), one line per `y`
 * column; with `low` and `high`, a shaded band between them. */
const lines: ChartComponent = {
  kind: 'chart',
  draw(p, rows) {
    const xi = rows.col(p.x, 'x');
    const band = p.low || p.high ? [rows.col(p.low, 'low'), rows.col(p.high, 'high')] : null;
    const ys = rows.values(p.y, [xi, ...(band ?? [])]);
    const numericX = rows.isNumeric(xi);
    const xs = rows.rows.map((r) => (numericX ? num(r[xi]) : label(r[xi])));
    const point = (i: number, v: number | null) => (numericX ? [xs[i], v] : v);
    const sym = rows.rows.length <= 150 ? { symbol: 'circle', symbolSize: 5 } : { symbol: 'none' };
    const series: Record<string, unknown>[] = [];
    const names = ys.map((i) => rows.names[i]);
    let bandName = '';
    if (band) {
      const [lo, hi] = band;
      bandName = `${rows.names[lo]} – ${rows.names[hi]}`;
      series.push(
        { name: '(band base)', type: 'line', stack: 'band', data: rows.rows.map((r, i) => point(i, plotted(r[lo], p.log))), symbol: 'none', lineStyle: { opacity: 0 }, silent: true, tooltip: { show: false } },
        {
          name: bandName,
          type: 'line',
          stack: 'band',
          data: rows.rows.map((r, i) => {
            const a = plotted(r[lo], p.log);
            const b = plotted(r[hi], p.log);
            return point(i, a === null || b === null ? null : b - a);
          }),
          symbol: 'none',
          lineStyle: { opacity: 0 },
          areaStyle: { color: 'rgba(59,130,246,0.2)' },
          itemStyle: { color: 'rgba(59,130,246,0.4)' },
          silent: true,
        },
      );
    }
    ys.forEach((i, k) => {
      const color = PALETTE[k % PALETTE.length];
      series.push({ name: rows.names[i], type: 'line', data: rows.rows.map((r, j) => point(j, plotted(r[i], p.log))), ...sym, lineStyle: { width: 2, color }, itemStyle: { color }, connectNulls: false });
    });
    const option = {
      animation: false,
      grid: { left: 64, right: numericX ? 44 : 40, top: names.length + (band ? 1 : 0) > 1 ? 30 : 14, bottom: 30 },
      legend: legend(band ? [bandName, ...names] : names),
      tooltip: {
        ...TOOLTIP,
        trigger: 'axis',
        formatter: (ps: unknown) => {
          const i = (ps as { dataIndex: number }[])[0]?.dataIndex ?? 0;
          const r = rows.rows[i];
          if (!r) return '';
          const out = [`<b>${esc(rows.names[xi])} ${esc(label(r[xi]))}</b>`];
          if (band) out.push(`${esc(bandName)}: ${cellText(r[band[0]])} – ${cellText(r[band[1]])}`);
          for (const c of ys) out.push(`${esc(rows.names[c])}: <b>${cellText(r[c])}</b>`);
          return out.join('<br/>');
        },
      },
      xAxis: numericX
        ? { type: 'value', min: 'dataMin', max: 'dataMax', name: rows.names[xi], nameLocation: 'end', nameTextStyle: NAME_STYLE, axisLabel: { ...AXIS_LABEL, formatter: (v: number) => short(v), hideOverlap: true } }
        : { type: 'category', data: xs, boundaryGap: false, axisLabel: { ...AXIS_LABEL, hideOverlap: true, formatter: (v: string) => cutName(v, 24) } },
      yAxis: valueAxis(p.log),
      series,
    };
    const nearest = (x: number) => {
      let best: number | null = null;
      let d = Infinity;
      xs.forEach((v, i) => {
        const e = Math.abs((numericX ? (v as number) : i) - x);
        if (v !== null && e < d) {
          d = e;
          best = i;
        }
      });
      return best;
    };
    return {
      option: option as echarts.EChartsOption,
      rowOf: (c) => c.dataIndex,
      rowAt: (chart, pt) => {
        if (!chart.containPixel('grid', pt)) return null;
        const x = chart.convertFromPixel({ xAxisIndex: 0 }, pt[0]) as unknown as number;
        return Number.isFinite(x) ? nearest(x) : null;
      },
    };
  },
};

/** Histogram: the values of `value` in `bins` bins (default 20), bin edges on the x axis. A
 * click on a bin picks its row of largest value. */
const histogram: ChartComponent = {
  kind: 'chart',
  draw(p, rows) {
    const vi = rows.col(p.value, 'value');
    const vals = rows.rows.map((r, i) => [num(r[vi]), i] as const).filter((v): v is readonly [number, number] => v[0] !== null);
    let lo = Math.min(...vals.map((v) => v[0]));
    let hi = Math.max(...vals.map((v) => v[0]));
    let n = Math.max(1, Math.min(500, p.bins ?? 20));
    if (!vals.length) {
      lo = 0;
      hi = 1;
    }
    if (hi === lo) {
      const w = Math.abs(lo) * 0.05 || 0.5;
      lo -= w;
      hi += w;
      n = 1;
    }
    const width = (hi - lo) / n;
    const counts = new Array<number>(n).fill(0);
    const top = new Array<number | null>(n).fill(null);
    for (const [v, row] of vals) {
      const b = Math.min(n - 1, Math.floor((v - lo) / width));
      counts[b]++;
      const cur = top[b];
      if (cur === null || (num(rows.rows[cur][vi]) as number) < v) top[b] = row;
    }
    const data = counts.map((c, b) => [lo + b * width, lo + (b + 1) * width, c]);
    const option = {
      animation: false,
      grid: { left: 56, right: 24, top: 26, bottom: 44 },
      tooltip: {
        ...TOOLTIP,
        trigger: 'item',
        formatter: (q: { data: number[] }) => `${esc(rows.names[vi])} in [${cellText(q.data[0])}, ${cellText(q.data[1])}${q.data[1] === hi ? ']' : ')'}<br/><b>${q.data[2]}</b> rows`,
      },
      xAxis: { type: 'value', min: lo, max: hi, interval: n <= 12 ? width : undefined, name: rows.names[vi], nameLocation: 'middle', nameGap: 26, nameTextStyle: NAME_STYLE, axisLabel: { ...AXIS_LABEL, hideOverlap: true, formatter: (v: number) => short(v) } },
      yAxis: { type: p.log ? 'log' : 'value', name: 'rows', minInterval: 1, nameTextStyle: NAME_STYLE, axisLabel: AXIS_LABEL },
      series: [
        {
          type: 'custom',
          name: rows.names[vi],
          encode: { x: [0, 1], y: 2 },
          data: data.map((d) => (p.log && d[2] === 0 ? [d[0], d[1], null] : d)),
          cursor: 'pointer',
          renderItem: (_params: unknown, api: { value(i: number): number; coord(v: number[]): number[]; style(): object }) => {
            const c = api.value(2);
            if (!c) return null;
            const a = api.coord([api.value(0), c]);
            const b = api.coord([api.value(1), p.log ? 1 : 0]);
            return { type: 'rect', shape: { x: a[0] + 0.5, y: a[1], width: Math.max(1, b[0] - a[0] - 1), height: b[1] - a[1] }, style: { ...api.style(), fill: '#2563eb' } };
          },
        },
      ],
    };
    return { option: option as unknown as echarts.EChartsOption, rowOf: (c) => top[c.dataIndex] ?? null };
  },
};

/** Scatter: x from `x`, y from the first `y` column (log: both axes); the tooltip shows the row. */
const scatter: ChartComponent = {
  kind: 'chart',
  draw(p, rows) {
    const xi = rows.col(p.x, 'x');
    const yi = rows.values(p.y, [xi])[0];
    const numericX = rows.isNumeric(xi);
    const data = rows.rows
      .map((r, i) => [numericX ? plotted(r[xi], p.log) : label(r[xi]), plotted(r[yi], p.log), i] as const)
      .filter((d) => d[0] !== null && d[1] !== null);
    const option = {
      animation: false,
      grid: { left: 64, right: 40, top: 24, bottom: 44 },
      tooltip: { ...TOOLTIP, trigger: 'item', formatter: (q: { data: [unknown, unknown, number] }) => rowTooltip(rows, q.data[2]) },
      xAxis: numericX
        ? { ...valueAxis(p.log, rows.names[xi]), scale: !p.log, nameLocation: 'middle', nameGap: 26 }
        : { type: 'category', name: rows.names[xi], nameLocation: 'middle', nameGap: 26, nameTextStyle: NAME_STYLE, axisLabel: { ...AXIS_LABEL, hideOverlap: true } },
      yAxis: { ...valueAxis(p.log, rows.names[yi]), scale: !p.log },
      series: [{ type: 'scatter', name: rows.names[yi], data, symbolSize: data.length > 2000 ? 4 : 8, itemStyle: { opacity: 0.75 }, cursor: 'pointer', large: data.length > 5000 }],
    };
    return { option: option as unknown as echarts.EChartsOption, rowOf: (c) => (c.data as [unknown, unknown, number] | undefined)?.[2] ?? null };
  },
};

/** Pie: slices named by `x`, sized by `value`; `donut`: a ring. */
const pie: ChartComponent = {
  kind: 'chart',
  draw(p, rows, size) {
    const xi = rows.col(p.x, 'x');
    const vi = rows.col(p.value, 'value');
    const data = rows.rows
      .map((r, i) => ({ name: label(r[xi]), value: num(r[vi]), row: i }))
      .filter((d): d is { name: string; value: number; row: number } => d.value !== null && d.value > 0);
    // A legend on the left names every slice (the smallest have no label of their own).
    const legendW = Math.min(180, size.width * 0.28);
    const r = Math.min((size.width - legendW) * 0.3, size.height * 0.36);
    const max = Math.max(8, Math.floor(((size.width - legendW) / 2 - r - 30) / 6.4) - 6);
    const option = {
      animation: false,
      legend: {
        type: 'scroll',
        orient: 'vertical',
        left: 4,
        top: 'middle',
        textStyle: { fontSize: 11, width: legendW - 30, overflow: 'truncate' },
        formatter: (name: string) => cutName(name, Math.floor((legendW - 30) / 6.4)),
        tooltip: { show: true },
      },
      tooltip: { ...TOOLTIP, trigger: 'item', formatter: (q: { name: string; value: number; percent: number }) => `<b>${esc(q.name)}</b><br/>${esc(rows.names[vi])}: <b>${cellText(q.value)}</b> (${q.percent.toFixed(1)}%)` },
      series: [
        {
          type: 'pie',
          radius: p.donut ? [r * 0.55, r] : [0, r],
          left: legendW,
          center: ['50%', '52%'],
          data,
          cursor: 'pointer',
          avoidLabelOverlap: true,
          minShowLabelAngle: 3,
          label: {
            fontSize: 11,
            color: '#374151',
            formatter: (q: { name: string; percent: number }) => `${cutName(q.name, max)} ${q.percent.toFixed(1)}%`,
          },
          labelLayout: { hideOverlap: true },
          labelLine: { length: 10, length2: 10 },
        },
      ],
    };
    return { option: option as echarts.EChartsOption, rowOf: (c) => (c.data as { row: number } | undefined)?.row ?? null };
  },
};

/** Heat map: columns from `x`, rows from the first `y` column, cells coloured by `value`
 * (log: by its logarithm), a legend of the colours' values. */
const heatmap: ChartComponent = {
  kind: 'chart',
  draw(p, rows, size) {
    const xi = rows.col(p.x, 'x');
    const yi = rows.values(p.y, [xi])[0];
    const vi = rows.col(p.value, 'value');
    const axis = (i: number) => {
      const seen = new Map<string, Cell>();
      for (const r of rows.rows) if (!seen.has(label(r[i]))) seen.set(label(r[i]), r[i]);
      const keys = [...seen.keys()];
      if (rows.isNumeric(i)) keys.sort((a, b) => (num(seen.get(a) as Cell) ?? 0) - (num(seen.get(b) as Cell) ?? 0));
      return keys;
    };
    const xs = axis(xi);
    const ys = axis(yi);
    const xIndex = new Map(xs.map((k, i) => [k, i]));
    const yIndex = new Map(ys.map((k, i) => [k, i]));
    const data = rows.rows
      .map((r, i) => {
        const v = num(r[vi]);
        const c = v === null ? null : p.log ? (v > 0 ? Math.log10(v) : null) : v;
        return [xIndex.get(label(r[xi])) as number, yIndex.get(label(r[yi])) as number, c, i];
      })
      .filter((d) => d[2] !== null) as number[][];
    const vs = data.map((d) => d[2]);
    const min = vs.length ? Math.min(...vs) : 0;
    const max = vs.length ? Math.max(...vs) : 1;
    const shown = (v: number) => cellText(p.log ? 10 ** v : v);
    const yMax = Math.max(6, Math.min(40, Math.floor((size.width * 0.28) / 6.4)));
    const yLongest = Math.max(1, ...ys.map((c) => Math.min(c.length, yMax)));
    const option = {
      animation: false,
      grid: { left: Math.round(charPx(yLongest) + 14), right: 90, top: 12, bottom: 40 },
      tooltip: {
        ...TOOLTIP,
        trigger: 'item',
        formatter: (q: { data: number[] }) => {
          const r = rows.rows[q.data[3]];
          return `${esc(rows.names[xi])} <b>${esc(label(r[xi]))}</b><br/>${esc(rows.names[yi])} <b>${esc(label(r[yi]))}</b><br/>${esc(rows.names[vi])}: <b>${cellText(r[vi])}</b>`;
        },
      },
      xAxis: { type: 'category', data: xs, name: rows.names[xi], nameLocation: 'middle', nameGap: 24, nameTextStyle: NAME_STYLE, splitArea: { show: false }, axisLabel: { ...AXIS_LABEL, hideOverlap: true, formatter: (v: string) => cutName(v, 16) } },
      yAxis: { type: 'category', data: ys, name: '', axisLabel: { ...AXIS_LABEL, hideOverlap: true, formatter: (v: string) => cutName(v, yMax) } },
      visualMap: {
        type: 'continuous',
        min,
        max: max === min ? min + 1 : max,
        dimension: 2,
        calculable: true,
        orient: 'vertical',
        right: 4,
        top: 'middle',
        itemHeight: Math.max(60, Math.min(220, size.height - 110)),
        itemWidth: 12,
        precision: 6,
        textStyle: { fontSize: 10 },
        formatter: (v: number) => shown(v),
        inRange: { color: HOT },
      },
      series: [{ type: 'heatmap', data, cursor: 'pointer', emphasis: { itemStyle: { borderColor: '#111', borderWidth: 1 } }, progressive: 0 }],
    };
    return { option: option as echarts.EChartsOption, rowOf: (c) => (c.data as number[] | undefined)?.[3] ?? null };
  },
};

/** Table: the `y` columns (all when empty), numbers right-aligned and formatted; a click on a
 * header sorts by it (again: the other way), a click on a row selects it. */
const table: HtmlComponent = {
  kind: 'html',
  draw(p, rows, host) {
    const cols = p.y.length ? p.y.map((n) => rows.col(n, 'y')) : rows.names.map((_, i) => i);
    const order = rows.rows.map((_, i) => i);
    const { col, desc } = host.sort;
    if (col !== null) {
      const cmp = (a: Cell, b: Cell) => {
        if (a === b) return 0;
        if (a === null) return 1;
        if (b === null) return -1;
        const na = num(a);
        const nb = num(b);
        if (rows.isNumeric(col) && na !== null && nb !== null) return na - nb;
        return String(a).localeCompare(String(b));
      };
      order.sort((a, b) => (desc ? -1 : 1) * cmp(rows.rows[a][col], rows.rows[b][col]) || a - b);
    }
    const head = cols
      .map((c) => `<th data-col="${c}" class="${rows.isNumeric(c) ? 'num' : ''}" title="sort by ${esc(rows.names[c])}">${esc(rows.names[c])}${c === col ? (desc ? ' ▼' : ' ▲') : ''}</th>`)
      .join('');
    const clickable = Object.keys(p.select).length > 0;
    // Text columns share about half of the panel's width (12 px monospace: ~7.3 px a character).
    const texts = cols.filter((c) => !rows.isNumeric(c)).length;
    const width = cols.length > 1 && texts > 0 ? Math.max(12, Math.min(80, Math.floor((host.el.clientWidth * 0.5) / texts / 7.3))) : 80;
    const body = order
      .map((i) => {
        const r = rows.rows[i];
        const tds = cols
          .map((c) => {
            const t = label(r[c]);
            const text = r[c] === null ? '–' : rows.isNumeric(c) ? cellText(r[c]) : cutName(t, width);
            return `<td class="${rows.isNumeric(c) ? 'num' : 'name'}"${t.length > width ? ` title="${esc(t)}"` : ''}>${esc(text)}</td>`;
          })
          .join('');
        return `<tr data-row="${i}" class="${host.selected(i) ? 'selected' : ''}${clickable ? ' pick' : ''}">${tds}</tr>`;
      })
      .join('');
    host.el.innerHTML = `<table class="data sql-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
    host.el.querySelector('thead')?.addEventListener('click', (ev) => {
      const th = (ev.target as HTMLElement).closest<HTMLElement>('th[data-col]');
      if (!th) return;
      const c = Number(th.dataset.col);
      host.sort = { col: c, desc: host.sort.col === c ? !host.sort.desc : rows.isNumeric(c) };
      table.draw(p, rows, host);
    });
    host.el.querySelector('tbody')?.addEventListener('click', (ev) => {
      const tr = (ev.target as HTMLElement).closest<HTMLElement>('tr[data-row]');
      if (tr) host.pick(Number(tr.dataset.row));
    });
  },
};

/** Every component by its name in the dashboard file (`component = "bars"`). */
export const COMPONENTS: Record<Component, ChartComponent | HtmlComponent> = { table, bars, lines, histogram, scatter, pie, heatmap };

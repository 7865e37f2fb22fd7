// Colour scales of the matrix views (heat map, overview): linear or logarithmic, the ticks of
// their legends in real values (never logs), and the legend drawn as ECharts graphic elements
// (a gradient bar with its values at both ends and at a few ticks, and the blank-cell entry).

/** The colour scale of the matrix views (cold to hot). */
export const HOT = ['#313695', '#4575b4', '#74add1', '#abd9e9', '#e0f3f8', '#ffffbf', '#fee090', '#fdae61', '#f46d43', '#d73027', '#a50026'];

/** A mapping of values to the visualMap's dimension: `map(v)` lies in `[vmin, vmax]` for `v` in
 * `[lo, hi]`. A log scale maps `log10(max(v, lo))`: 0 and values below the floor `lo` take the
 * coldest colour. */
export interface Scale {
  log: boolean;
  /** Lowest real value (the floor of a log scale). */
  lo: number;
  /** Highest real value. */
  hi: number;
  vmin: number;
  vmax: number;
  map(v: number): number;
}

/** A linear scale over `[lo, hi]` (a degenerate range is widened). */
export function linear(lo: number, hi: number): Scale {
  if (!(hi > lo)) hi = lo + (Math.abs(lo) || 1);
  return { log: false, lo, hi, vmin: lo, vmax: hi, map: (v) => v };
}

/** A log scale over `[floor, hi]` (`floor` > 0; raised to `hi / 10^7` at most 7 decades down). */
export function logarithmic(floor: number, hi: number): Scale {
  if (!(hi > 0)) hi = 1;
  let lo = floor > 0 && floor < hi ? floor : hi / 1e3;
  lo = Math.max(lo, hi / 1e7);
  const vmin = Math.log10(lo);
  const vmax = Math.log10(hi);
  return { log: true, lo, hi, vmin, vmax, map: (v) => Math.log10(Math.max(v, lo)) };
}

function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

/** The legend's values: both ends and up to `count` ticks between (nice multiples on a linear
 * scale, powers of ten on a log scale), never closer to an end than a third of a step. */
export function ticks(sc: Scale, count = 4): number[] {
  const inner: number[] = [];
  if (sc.log) {
    const a = Math.ceil(sc.vmin + 1e-9);
    const b = Math.floor(sc.vmax - 1e-9);
    const every = Math.max(1, Math.ceil((b - a + 1) / count));
    for (let k = a; k <= b; k += every) if (k - sc.vmin > 0.3 && sc.vmax - k > 0.3) inner.push(10 ** k);
  } else {
    const step = niceStep(sc.hi - sc.lo, count);
    for (let t = Math.ceil(sc.lo / step) * step; t < sc.hi; t += step) {
      if (t - sc.lo > step / 3 && sc.hi - t > step / 3) inner.push(t);
    }
  }
  return [sc.lo, ...inner, sc.hi];
}

/** The ink colours of the page (the theme's CSS variables). */
export function inks(): { ink: string; muted: string; panel: string; line: string } {
  const css = getComputedStyle(document.documentElement);
  const get = (name: string, dflt: string) => css.getPropertyValue(name).trim() || dflt;
  return { ink: get('--ink', '#1f2328'), muted: get('--muted', '#6b7280'), panel: get('--panel', '#ffffff'), line: get('--line', '#d0d7de') };
}

const GRADIENT = (x2: number, y2: number, y: number) => ({
  type: 'linear',
  x: 0,
  y,
  x2,
  y2,
  colorStops: HOT.map((color, i) => ({ offset: i / (HOT.length - 1), color })),
});

/** A vertical legend at `x`, `y` (its heading's top), the bar `h` px high: the heading lines,
 * the gradient with its values (`label(v)` of each tick) and the blank-cell entry. */
export function verticalLegend(o: { x: number; y: number; h: number; sc: Scale; values?: number[]; label: (v: number) => string; heading: string[]; blank: string[] }): object[] {
  const { ink, muted, panel, line } = inks();
  const out: object[] = [];
  const silent = true;
  o.heading.forEach((t, i) => {
    out.push({ type: 'text', name: 'legend-heading', silent, z: 110, x: o.x - 2, y: o.y + i * 12, style: { text: t, fill: i === 0 ? ink : muted, font: `${i === 0 ? 'bold ' : ''}10px sans-serif` } });
  });
  const top = o.y + o.heading.length * 12 + 6;
  out.push({ type: 'rect', name: 'legend-bar', silent, z: 110, shape: { x: o.x, y: top, width: 10, height: o.h }, style: { fill: GRADIENT(0, 0, 1), stroke: line } });
  // Each value's height on the bar; an inner tick too close to an end or to the previous kept
  // one (under 14 px) is left out, the ends always stay.
  const all = (o.values ?? ticks(o.sc, Math.max(2, Math.floor(o.h / 40)))).map((v) => ({ v, y: top + o.h - ((o.sc.map(v) - o.sc.vmin) / (o.sc.vmax - o.sc.vmin)) * o.h }));
  const ends = [all[0], all[all.length - 1]];
  const kept: { v: number; y: number }[] = [];
  all.forEach((t, i) => {
    const end = i === 0 || i === all.length - 1;
    if (end || (ends.every((e) => Math.abs(e.y - t.y) >= 14) && kept.every((k) => Math.abs(k.y - t.y) >= 14))) kept.push(t);
  });
  for (const { v, y } of kept) {
    out.push({ type: 'rect', name: 'legend-tick', silent, z: 110, shape: { x: o.x + 10, y: y - 0.5, width: 4, height: 1 }, style: { fill: ink } });
    out.push({ type: 'text', name: 'legend-label', silent, z: 110, x: o.x + 16, y, style: { text: o.label(v), fill: ink, font: '10px sans-serif', verticalAlign: 'middle' } });
  }
  const by = top + o.h + 12;
  out.push({ type: 'rect', name: 'legend-blank', silent, z: 110, shape: { x: o.x, y: by, width: 10, height: 10 }, style: { fill: panel, stroke: muted, lineWidth: 1 } });
  o.blank.forEach((t, i) => {
    out.push({ type: 'text', name: 'legend-blank-text', silent, z: 110, x: o.x + 14, y: by + 5 + i * 11, style: { text: t, fill: muted, font: '9px sans-serif', verticalAlign: 'middle' } });
  });
  return out;
}

/** A horizontal legend on one line ending at `right` (px from the left), `y` its middle: the
 * lowest value, the gradient (at most `w` px wide), the highest value, and the blank-cell entry. */
export function horizontalLegend(o: { right: number; y: number; w: number; lo: string; hi: string; blank: string }): object[] {
  const { ink, muted, panel, line } = inks();
  const silent = true;
  const font = '10px sans-serif';
  const width = (t: string) => t.length * 5.6;
  // The bar gives way first when the line is narrow (down to 24 px).
  const w = Math.max(24, Math.min(o.w, o.right - 8 - width(o.blank) - 14 - width(o.hi) - width(o.lo) - 18));
  let x = o.right - width(o.blank) - 14;
  const out: object[] = [
    { type: 'rect', name: 'legend-blank', silent, z: 110, shape: { x, y: o.y - 5, width: 10, height: 10 }, style: { fill: panel, stroke: muted, lineWidth: 1 } },
    { type: 'text', name: 'legend-blank-text', silent, z: 110, x: x + 13, y: o.y, style: { text: o.blank, fill: muted, font, verticalAlign: 'middle' } },
  ];
  x -= 10 + width(o.hi);
  out.push({ type: 'text', name: 'legend-label', silent, z: 110, x, y: o.y, style: { text: o.hi, fill: ink, font, verticalAlign: 'middle' } });
  x -= w + 4;
  out.push({ type: 'rect', name: 'legend-bar', silent, z: 110, shape: { x, y: o.y - 5, width: w, height: 10 }, style: { fill: GRADIENT(1, 0, 0), stroke: line } });
  x -= 4 + width(o.lo);
  out.push({ type: 'text', name: 'legend-label', silent, z: 110, x, y: o.y, style: { text: o.lo, fill: ink, font, verticalAlign: 'middle' } });
  return out;
}

/** `label` shortened to `max` characters from its start: the end (a callpath's leaf) is kept. */
export function elideStart(label: string, max: number): string {
  return label.length <= max ? label : `…${label.slice(label.length - (max - 1))}`;
}

/** Which labels of a category axis of `n` entries fit `px` pixels at `each` pixels a label: the
 * ECharts `interval` (0 = every label, k = every (k+1)-th). */
export function labelInterval(n: number, px: number, each = 12): number {
  const fit = Math.max(1, Math.floor(px / each));
  return n <= fit ? 0 : Math.ceil(n / fit) - 1;
}

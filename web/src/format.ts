// Number formatting shared by the views (the same rules as the CLI's tables).

import type { MetricInfo } from './api/MetricInfo';

function sig4(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 100) return v.toFixed(1);
  if (a >= 10) return v.toFixed(2);
  return v.toFixed(3);
}

/** `1.235 s`, `428.5 ms`, `41.00 µs`. */
export function durationUs(us: number): string {
  const a = Math.abs(us);
  if (a >= 1e6) return `${sig4(us / 1e6)} s`;
  if (a >= 1e3) return `${sig4(us / 1e3)} ms`;
  if (a >= 1 || a === 0) return `${sig4(us)} µs`;
  return `${sig4(us * 1e3)} ns`;
}

/** Integers with thousands separators, others with 4 significant digits. */
export function count(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString('en-US');
  return sig4(v);
}

function bytes(v: number): string {
  const a = Math.abs(v);
  if (a >= 1024 ** 3) return `${sig4(v / 1024 ** 3)} GiB`;
  if (a >= 1024 ** 2) return `${sig4(v / 1024 ** 2)} MiB`;
  if (a >= 1024) return `${sig4(v / 1024)} KiB`;
  return `${sig4(v)} B`;
}

/** A value in a unit (`s`, `µs`, `ns`, `B`, `count`, ...) for humans: durations scaled to
 * s/ms/µs/ns, bytes to KiB/MiB/GiB, counts and ratios (a derived metric `a / b` of one unit) plain, other units (`cycles`, a tool's own) named. */
export function value(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  switch (unit) {
    case 's':
      return durationUs(v * 1e6);
    case 'µs':
      return durationUs(v);
    case 'ns':
      return durationUs(v / 1e3);
    case 'B':
      return bytes(v);
    case 'count':
    case 'ratio':
    case '':
      return count(v);
    default:
      return `${count(v)} ${unit}`;
  }
}

/** A difference with its sign: `+1.235 ms` ({@link value} with a `+` when positive). */
export function signed(v: number, unit: string): string {
  return `${v > 0 ? '+' : ''}${value(v, unit)}`;
}

/** A metric as the controls name it: `time (s)`, and for one that does not add up its rule,
 * `min_time (s, min)`. */
export function metricLabel(m: MetricInfo): string {
  return m.combine === 'sum' ? `${m.name} (${m.unit})` : `${m.name} (${m.unit}, ${m.combine.replace('_', ' ')})`;
}

/** A compact value for heat-map cells. */
export function compact(v: number, unit: string): string {
  const s = value(v, unit);
  return s.replace(/\.0+ /, ' ');
}

/** A percentage: `66.4%`, `7.72%`. */
export function percent(p: number): string {
  return p >= 9.995 ? `${p.toFixed(1)}%` : `${p.toFixed(2)}%`;
}

/** A ratio: `1.27x`. */
export function ratio(r: number): string {
  return `${r.toFixed(2)}x`;
}

/** Escapes text for HTML. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Shortens a long name keeping its start and its end (the leaf of a callpath). */
export function shorten(s: string, max = 60): string {
  if (s.length <= max) return s;
  const head = s.slice(0, 18);
  const tail = s.slice(s.length - (max - 19));
  return `${head}…${tail}`;
}

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

/** The separator of a callpath's frames (`a => b => c`, the model's `CALLPATH_SEPARATOR`). */
export const CALLPATH_SEPARATOR = ' => ';

/** Shortens a long name to `max` characters. A callpath (`a => b => c`) keeps its leaf and as
 * many of its callers as fit, cut from the start (`… => b => c`: see {@link pathLabel}); any
 * other name keeps its start and its end. */
export function shorten(s: string, max = 60): string {
  if (s.length <= max) return s;
  if (s.includes(CALLPATH_SEPARATOR)) return pathLabel(s, max);
  const head = s.slice(0, 18);
  const tail = s.slice(s.length - (max - 19));
  return `${head}…${tail}`;
}

/** A name without frames cut to `max` characters keeping its start and end. */
function cutMiddle(s: string, max: number): string {
  if (s.length <= max) return s;
  const keep = Math.max(2, max - 1);
  const head = Math.ceil(keep / 2);
  return `${s.slice(0, head)}…${s.slice(s.length - (keep - head))}`;
}

/** A callpath `a => b => c` as a label of at most `max` characters that ends with its leaf:
 * the last frames that fit, the rest cut from the start (`… => b => c`); a leaf alone longer
 * than the room is cut in its middle (its end is kept). A name without frames is cut in its
 * middle. */
export function pathLabel(name: string, max = 60): string {
  if (name.length <= max) return name;
  const parts = name.split(CALLPATH_SEPARATOR);
  if (parts.length === 1) return cutMiddle(name, max);
  const more = `…${CALLPATH_SEPARATOR}`;
  let k = 1;
  while (k < parts.length && more.length + parts.slice(-(k + 1)).join(CALLPATH_SEPARATOR).length <= max) k++;
  if (k === parts.length) return name;
  const tail = parts.slice(-k);
  if (k === 1 && more.length + tail[0].length > max) tail[0] = cutMiddle(tail[0], Math.max(12, max - more.length));
  return more + tail.join(CALLPATH_SEPARATOR);
}

/** Labels of the names `names` (each at most `max` characters, see {@link pathLabel}) that
 * tell them apart: two different names with the same label get a few more characters each
 * (more of their leaf, then of their callers), up to twice `max`; callpaths that differ only
 * further up then show the nearest caller that tells them apart (`… => f => … => leaf`). */
export function pathLabels(names: readonly string[], max = 60): string[] {
  const cap = Math.max(2 * max, 40);
  const room = names.map(() => max);
  const labels = names.map((n) => pathLabel(n, max));
  const groups = () => {
    const seen = new Map<string, number[]>();
    labels.forEach((l, i) => {
      const at = seen.get(l);
      if (at) at.push(i);
      else seen.set(l, [i]);
    });
    return [...seen.values()].filter((at) => at.length > 1 && at.some((i) => names[i] !== names[at[0]]));
  };
  for (let round = 0; round < 200; round++) {
    let grew = false;
    for (const at of groups()) {
      for (const i of at) {
        if (labels[i] === names[i] || room[i] >= cap) continue;
        room[i] += 4;
        labels[i] = pathLabel(names[i], room[i]);
        grew = true;
      }
    }
    if (!grew) break;
  }
  for (const at of groups()) {
    const parts = at.map((i) => names[i].split(CALLPATH_SEPARATOR));
    at.forEach((i, g) => {
      const p = parts[g];
      const leaf = p[p.length - 1];
      // The nearest caller whose suffix of the path no other name of the group shares.
      for (let d = 2; d <= p.length; d++) {
        const suffix = p.slice(-d).join(CALLPATH_SEPARATOR);
        if (parts.every((q, h) => h === g || q.slice(-d).join(CALLPATH_SEPARATOR) !== suffix)) {
          const frame = p[p.length - d];
          labels[i] = `${d === p.length ? '' : `…${CALLPATH_SEPARATOR}`}${frame}${CALLPATH_SEPARATOR}${d > 2 ? `…${CALLPATH_SEPARATOR}` : ''}${leaf}`;
          break;
        }
      }
    });
  }
  return labels;
}

/** True when every thread of the run is `N.0.0` (one thread per rank): see {@link threadName}. */
let ranksOnly = false;

/** Decides how {@link threadName} names the threads of the loaded run: `rank N` when every
 * thread is `N.0.0` (context and thread 0 on every rank), else with their thread. */
export function threadNaming(run: { threads: number; nodes: number; thread_ids: readonly string[] }): void {
  ranksOnly = run.threads === run.nodes && run.thread_ids.every((t) => /^\d+\.0\.0$/.test(t));
}

/** What the threads of the loaded run are called on axes: `ranks` (one thread per rank) or
 * `threads`. */
export function threadsNoun(): 'ranks' | 'threads' {
  return ranksOnly ? 'ranks' : 'threads';
}

/** A thread label as an axis tick, short: `12` in a run of one thread per rank (the axis is
 * named `ranks`), a bin `0.0.0 – 15.0.0` as `0–15` there; else as {@link threadName}. */
export function threadTick(label: string | null | undefined): string {
  if (!label) return '';
  if (ranksOnly) {
    const one = /^(\d+)\.0\.0$/.exec(label);
    if (one) return one[1];
    const bin = /^(\d+)\.0\.0 – (\d+)\.0\.0$/.exec(label);
    if (bin) return `${bin[1]}–${bin[2]}`;
  }
  return threadName(label);
}

/** A thread label `N.C.T` (node.context.thread) as the page shows it: `rank 12` in a run of
 * one thread per rank, else `rank 12, thread 3` (`rank 12, context 1, thread 3` when the
 * context is not 0). Other labels are shown as they are; URLs, the API and CSV keep `N.C.T`. */
export function threadName(label: string | null | undefined): string {
  if (!label) return '';
  // A bin of threads, `0.0.0 – 15.0.0`.
  const bin = /^(\S+) – (\S+)$/.exec(label);
  if (bin) {
    const [a, b] = [threadName(bin[1]), threadName(bin[2])];
    return a.startsWith('rank ') && b.startsWith('rank ') && !a.includes(',') && !b.includes(',') ? `ranks ${a.slice(5)} – ${b.slice(5)}` : `${a} – ${b}`;
  }
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(label);
  if (!m) return label;
  const [, n, c, t] = m;
  if (ranksOnly && c === '0' && t === '0') return `rank ${n}`;
  return c === '0' ? `rank ${n}, thread ${t}` : `rank ${n}, context ${c}, thread ${t}`;
}

// The one selection every view reads and writes (the seeds' linked cursors), mirrored in the
// URL query string so that a link reproduces what one sees.

export type Kind = 'exclusive' | 'inclusive' | 'calls';
export type RowsKind = 'events' | 'lines';

export interface Selection {
  /** Metric index. */
  metric: number;
  /** Value kind shown by the matrix views, the table ranking and the event view. */
  kind: Kind;
  /** Selected event id (null = none). */
  event: number | null;
  /** Selected thread `N.C.T` (null = none). */
  thread: string | null;
  /** Rows of the matrix views: events or source lines. */
  rows: RowsKind;
  /** Include callpath events as rows and in the table. */
  callpaths: boolean;
  /** Heat map region: row positions [r0, r1) and thread positions [t0, t1); null = all. */
  r0: number | null;
  r1: number | null;
  t0: number | null;
  t1: number | null;
  /** Heat map colour: per event (row) or over the whole run. */
  norm: 'event' | 'global';
  /** Reduction of bins: max keeps peaks, sum keeps totals. */
  reduce: 'max' | 'sum';
  /** Overview: skip runs of more than `skip` empty rows; bin `bin` rows; `strips` strips. */
  skip: number;
  bin: number;
  strips: number;
  /** Event view histogram bins (0 = automatic). */
  bins: number;
  /** Call tree scope: total, mean, or the selected thread. */
  scope: 'total' | 'mean' | 'thread';
  /** Terrain resolution (event bins × thread bins) and labelled peaks. */
  ty: number;
  tx: number;
  peaks: number;
  /** Thread axis order: by id, by the value of the selected event, or by similarity (clusters). */
  threads: 'id' | 'value' | 'cluster';
  /** Number of clusters for the similarity order. */
  clusters: number;
  /** Which threads to show: all, the first `top` of the order, or each cluster's min/median/max. */
  subset: 'all' | 'top' | 'reps';
  top: number;
  /** Ranked table filter (name or group substring). */
  filter: string;
  /** Runs observed over time: the sample shown (null = the final state, or the newest sample
   * of a live run) and whether values are cumulative or the change since the previous sample. */
  sample: number | null;
  mode: 'cumulative' | 'delta';
  /** Kiviat tube: drawn in 3D along the samples, or a radar of the current sample. */
  kiviat: 'tube' | 'radar';
  /** Point cloud: comma-separated event ids of the y, z and colour axes ('' = the largest events;
   * x is the selected event). */
  cloud: string;
  /** A maximized panel, if any. */
  focus: string | null;
  /** Live runs: bumped when new samples arrived (not in the URL). */
  revision: number;
}

export const defaults: Selection = {
  metric: 0,
  kind: 'exclusive',
  event: null,
  thread: null,
  rows: 'events',
  callpaths: false,
  r0: null,
  r1: null,
  t0: null,
  t1: null,
  norm: 'event',
  reduce: 'max',
  skip: 10,
  bin: 1,
  strips: 1,
  bins: 0,
  scope: 'total',
  ty: 32,
  tx: 64,
  peaks: 5,
  threads: 'id',
  clusters: 8,
  subset: 'all',
  top: 64,
  filter: '',
  sample: null,
  mode: 'cumulative',
  kiviat: 'tube',
  cloud: '',
  focus: null,
  revision: 0,
};

type Listener = (s: Selection, changed: Set<keyof Selection>) => void;

function parse(search: string): Selection {
  const q = new URLSearchParams(search);
  const s: Selection = { ...defaults };
  const num = (k: keyof Selection) => {
    const v = q.get(k);
    if (v === null || v === '') return;
    const n = Number(v);
    if (Number.isFinite(n)) (s as unknown as Record<string, unknown>)[k] = n;
  };
  (['metric', 'event', 'r0', 'r1', 't0', 't1', 'skip', 'bin', 'strips', 'bins', 'ty', 'tx', 'peaks', 'clusters', 'top', 'sample'] as const).forEach(num);
  const str = <K extends keyof Selection>(k: K, allowed?: string[]) => {
    const v = q.get(k);
    if (v !== null && (!allowed || allowed.includes(v))) (s as unknown as Record<string, unknown>)[k] = v;
  };
  str('kind', ['exclusive', 'inclusive', 'calls']);
  str('rows', ['events', 'lines']);
  str('norm', ['event', 'global']);
  str('reduce', ['max', 'sum']);
  str('scope', ['total', 'mean', 'thread']);
  str('threads', ['id', 'value', 'cluster']);
  str('subset', ['all', 'top', 'reps']);
  str('mode', ['cumulative', 'delta']);
  str('kiviat', ['tube', 'radar']);
  str('cloud');
  str('thread');
  str('filter');
  str('focus');
  if (q.get('callpaths') === '1') s.callpaths = true;
  return s;
}

function serialize(s: Selection): string {
  const q = new URLSearchParams();
  const token = new URLSearchParams(window.location.search).get('token');
  if (token) q.set('token', token);
  for (const k of Object.keys(defaults) as (keyof Selection)[]) {
    const v = s[k];
    if (v === defaults[k] || v === null || k === 'revision') continue;
    q.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  const str = q.toString();
  return str ? `?${str}` : window.location.pathname;
}

class Store {
  private sel: Selection = parse(window.location.search);
  private listeners: Listener[] = [];

  get(): Selection {
    return this.sel;
  }

  /** Updates the selection; every listener hears which keys changed. */
  set(patch: Partial<Selection>): void {
    const changed = new Set<keyof Selection>();
    const next = { ...this.sel };
    for (const [k, v] of Object.entries(patch) as [keyof Selection, unknown][]) {
      if (next[k] !== v) {
        (next as unknown as Record<string, unknown>)[k] = v;
        changed.add(k);
      }
    }
    if (changed.size === 0) return;
    this.sel = next;
    window.history.replaceState(null, '', serialize(next));
    for (const l of this.listeners) l(next, changed);
  }

  subscribe(l: Listener): void {
    this.listeners.push(l);
  }
}

export const store = new Store();

/** Selection keys that change the profile every view reads (which sample, cumulative/delta). */
export const DATA_KEYS: (keyof Selection)[] = ['sample', 'mode', 'revision'];

/** True when any of `keys` changed. A view that reloads when the metric changes also reloads
 * when the data changes (another sample or mode): `'metric'` stands for both. */
export function touched(changed: Set<keyof Selection>, ...keys: (keyof Selection)[]): boolean {
  return keys.some((k) => changed.has(k)) || (keys.includes('metric') && DATA_KEYS.some((k) => changed.has(k)));
}

/** Selection keys that change the thread axis (its order or which threads it shows). */
export const AXIS_KEYS: (keyof Selection)[] = ['threads', 'clusters', 'subset', 'top'];

/** True when the thread axis changed: its order, its subset, or (for the value order) the event. */
export function axisChanged(s: Selection, changed: Set<keyof Selection>): boolean {
  return (
    AXIS_KEYS.some((k) => changed.has(k)) ||
    (s.threads === 'value' && changed.has('event')) ||
    (s.threads !== 'id' && DATA_KEYS.some((k) => changed.has(k)))
  );
}

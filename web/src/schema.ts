// The one schema of the page state: every key with its default, its allowed values (enums) or
// parser, whether it is kept in the URL and shared in a shared session, and the label of its
// control. The TypeScript types, URL parsing and mirroring (./state.ts), session sharing
// (./share.ts) and the `<select>` options (./controls.ts) are all derived from it.
//
// Enum keys take their values from the server's request types (./api/*.ts, generated from
// the Rust enums by ts-rs): a value missing or added on either side does not compile.
//
// Two groups: the linked `selection` that every view reads (what is selected and how it is
// measured), and the `panels`' own settings, one group per panel id. Keys are unique across
// groups: the URL parameter of a key is its name.

import type { DiffSort } from './api/DiffSort';
import type { LineHeat } from './api/LineHeat';
import type { Normalize } from './api/Normalize';
import type { Reduce } from './api/Reduce';
import type { RowKind } from './api/RowKind';
import type { SampleMode } from './api/SampleMode';
import type { Subset } from './api/Subset';
import type { ThreadOrder } from './api/ThreadOrder';
import type { ValueKind } from './api/ValueKind';
import { type Env, type Field, type ValueOf, choice, flag, int, numberChoice, optionalIndex, optionalText, text } from './fields';

/** A thread `N.C.T` (node.context.thread). */
const THREAD = /^\d+\.\d+\.\d+$/;

/** The schema: groups of fields (see the file's head). */
export const SCHEMA = {
  /** The linked selection: every view follows it. */
  selection: {
    metric: int(0, { min: 0 }, { label: 'Metric' }, (v, e) => v < e.run.metrics.length),
    kind: choice<ValueKind>({ exclusive: 'exclusive', inclusive: 'inclusive', calls: 'calls', subcalls: 'subcalls' }, 'exclusive', { label: 'Value' }),
    /** Runs observed over time: the sample shown (null = the final state, or the newest sample of a live run). */
    sample: optionalIndex({}, (v, e) => v === null || e.run.live || v < e.run.samples),
    mode: choice<SampleMode>({ cumulative: 'cumulative', delta: 'change since previous sample' }, 'cumulative', { label: 'Values' }),
    event: optionalIndex(),
    thread: optionalText(THREAD),
    rows: choice<RowKind>({ events: 'events', lines: 'source lines' }, 'events', { label: 'Rows' }, (v, e) => v === 'events' || e.run.sample_events > 0),
    callpaths: flag(false, { label: 'callpaths' }),
    reduce: choice<Reduce>({ max: 'max (keep peaks)', sum: 'sum' }, 'max', { label: 'Reduce' }),
    /** The thread axis of the matrix views (heat map, overview, terrain). */
    threads: choice<ThreadOrder>({ id: 'threads by id', value: 'by event value', cluster: 'by similarity' }, 'id', {
      title: 'order of the thread axis (also used by the overview and the terrain)',
    }),
    clusters: int(8, { min: 1, max: 64 }, { title: 'number of clusters' }),
    subset: choice<Subset>({ all: 'all threads', top: 'first N', reps: 'cluster min/med/max' }, 'all', { title: 'which threads to show' }),
    top: int(64, { min: 1 }, { title: 'N' }),
    /** The region the heat map shows: row positions [r0, r1), thread positions [t0, t1); null = all. */
    r0: optionalIndex(),
    r1: optionalIndex(),
    t0: optionalIndex(),
    t1: optionalIndex(),
  },
  /** Settings that belong to one panel each (the group's name is the panel id). */
  panels: {
    ranked: {
      filter: text('', { title: 'filter name or group' }),
      /** The columns shown, keys joined by `,` ('' = fitted to the panel's width). */
      cols: text('', { title: 'columns shown (none chosen: fitted to the panel width)' }, /^([a-z]+(,[a-z]+)*)?$/),
    },
    /** The heat map's colours: per event or one scale for all rows; the range of the window
     * shown or of the whole (un-zoomed) run; a linear or a log scale. */
    heatmap: {
      norm: choice({ event: 'colour per event', global: 'colour all rows' }, 'event', { title: 'colour each row over its own largest value, or all rows on one scale' }),
      crange: choice({ window: 'this window', run: 'whole run' }, 'window', {
        label: 'range',
        title: 'colour range: the values of the window shown, or those of the whole run (zooming then keeps what a colour means)',
      }),
      cscale: choice({ linear: 'linear', log: 'log' }, 'linear', { title: 'colour scale: linear, or logarithmic (0 and tiny values take the coldest colour)' }),
    },
    overview: {
      skip: int(10, { min: 0, max: 100000 }, { label: 'skip >' }),
      bin: int(1, { min: 1, max: 10000 }, { label: 'bin' }),
      strips: int(1, { min: 1, max: 16 }, { label: 'strips' }),
    },
    event: { bins: int(0, { min: 0, max: 60 }, { label: 'histogram bins', title: '0 = automatic (Sturges)' }) },
    /** The user-events panel: the user event drawn per thread (its id) and the statistic drawn. */
    userevents: {
      uevent: optionalIndex({}, (v, e) => v === null || v < e.run.user_events),
      ustat: choice({ mean: 'mean', max: 'max', min: 'min', count: 'count', stddev: 'std. dev.' }, 'mean', { title: 'statistic drawn per thread' }),
    },
    calltree: {
      scope: choice(
        { total: 'total over threads', mean: 'mean over threads having it', mean_all: 'mean over all threads', thread: 'selected thread' },
        'total',
      ),
      /** Width of the name column in px (0 = fitted to the panel). */
      ctw: int(0, { min: 0, max: 4000 }, { title: 'width of the name column (px; 0: fitted to the panel)' }),
    },
    terrain: {
      tx: numberChoice([8, 16, 32, 64, 128, 256], 64, { label: 'X (threads)' }),
      ty: numberChoice([8, 16, 32, 64, 128], 32, { label: 'Y (events)' }),
      peaks: numberChoice([0, 3, 5, 10], 5, { label: 'peaks' }),
      /** The terrain's camera: the 3-D surface at an angle, or seen from above (every peak visible). */
      tview: choice({ surface: '3-D', top: 'from above' }, 'surface', { label: 'view' }),
    },
    kiviat: { kiviat: choice({ tube: '3D tube over samples', radar: 'radar at the sample' }, 'tube', { label: 'show' }) },
    /** Runs side by side (`serve A B...`): which compared run is B (1-based), how values are
     * normalized, how the table is sorted, and whether B − A or B / A is drawn. */
    compare: {
      cmp: int(1, { min: 1 }, { label: 'B', title: 'the run compared with A' }, (v, e) => v <= e.run.compared.length),
      cmpnorm: choice<'auto' | Normalize>(
        { auto: 'auto', total: 'total over threads', per_thread: 'per thread' },
        'auto',
        { label: 'values', title: 'auto: per thread when the runs have different thread counts, else the total' },
      ),
      dsort: choice<DiffSort>({ abs_delta: '|B − A|', delta: 'B − A', ratio: 'B / A', a: 'A', b: 'B' }, 'abs_delta', { label: 'sort' }),
      dshow: choice({ delta: 'B − A', ratio: 'B / A', both: 'A and B' }, 'delta', { label: 'threads show' }),
      cmpview: choice({ table: 'events', tree: 'call tree' }, 'table', { label: 'show' }),
    },
    /** The category ordering the threads' stacked bars ('' = thread order). */
    categories: { csort: text('', { label: 'sort threads by', title: 'order the threads by their time in this category, largest first' }) },
    /** The source panel: what a line's heat is, and the file shown ('' = the selected event's
     * file, else the file with the largest total). */
    source: {
      heat: choice<LineHeat>({ sum: 'sum over threads', mean: 'mean over threads', max: 'max over threads', thread: 'selected thread' }, 'sum', { title: "what each line's heat is" }),
      sfile: text('', { title: 'the source file shown' }),
    },
    /** The timeline: its window `from-to` (ns since the trace's first event; null = the whole
     * trace), the selected slice `lane:start:end:depth`, the text searched for, and the
     * collapsed processes (names joined by `,`; `*` = all), and the first lane shown (`tl0`,
     * 64 lanes at a time; the strip above them covers every lane). */
    timeline: {
      tw: optionalText(/^\d+-\d+$/),
      tsel: optionalText(/^\d+:\d+:\d+:\d+$/),
      tq: text('', { title: 'search slices by name (Enter: next, Shift+Enter: previous)' }),
      tcol: text('', { title: 'collapsed processes' }),
      tl0: int(0, { min: 0 }, { title: 'first lane shown (lanes are shown 64 at a time)' }),
    },
    /** Event ids of the point cloud's y, z and colour axes ('' = the largest events). */
    pointcloud: { cloud: text('', {}, /^\d*(,\d*){0,2}$/) },
  },
  /** The page layout: a maximized panel (among the panels shown: the built-in ones or the
   * dashboard's), and the dashboard shown instead of the built-in views (an index of
   * `run.dashboards`, `serve --dashboard FILE`; null = the built-in views). */
  layout: {
    focus: optionalText(/^[a-z]+$/, {}, (v, e) => v === null || e.panels.includes(v)),
    dashboard: optionalIndex({ label: 'Show', title: 'the built-in views, or a dashboard file served with --dashboard' }, (v, e) => v === null || v < e.run.dashboards.length),
    /** Light or dark colours (null: the system's preference); each browser its own. */
    theme: optionalText(/^(light|dark)$/, { shared: false, title: 'light or dark colours' }),
  },
  /** Counters of the running page: never in the URL, never shared. */
  runtime: {
    /** Live runs: bumped when new samples arrived. */
    revision: int(0, { min: 0 }, { url: false, shared: false }),
  },
} as const;

type Group = Record<string, Field<unknown>>;
type Values<G> = { -readonly [K in keyof G]: ValueOf<G[K]> };
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type Panels = typeof SCHEMA.panels;

/** The linked selection. */
export type Selection = Values<typeof SCHEMA.selection>;
/** Ids of the panels that have settings. */
export type PanelId = keyof Panels;
/** The settings of each panel. */
export type PanelSettings = { [P in PanelId]: Values<Panels[P]> };
/** Every panel's settings in one object. */
export type Settings = UnionToIntersection<PanelSettings[PanelId]>;
/** The whole page state: selection, panel settings, layout and runtime counters, one flat
 * object (keys are unique). */
export type State = Selection & Settings & Values<typeof SCHEMA.layout> & Values<typeof SCHEMA.runtime>;
/** A key of the state (and its URL parameter). */
export type Key = keyof State;

/** The keys whose values are of type `T` (`KeyOf<number>`: the integer keys). */
export type KeyOf<T> = { [K in Key]: State[K] extends T ? K : never }[Key];

/** Where a key belongs: `selection`, a panel id, `layout` or `runtime`. */
export type Scope = 'selection' | PanelId | 'layout' | 'runtime';

function flatten(): { fields: Record<string, Field<unknown>>; scopes: Record<string, Scope> } {
  const fields: Record<string, Field<unknown>> = {};
  const scopes: Record<string, Scope> = {};
  const add = (g: Group, scope: Scope) => {
    for (const [k, f] of Object.entries(g)) {
      if (k in fields) throw new Error(`state key ${k} is declared twice`);
      fields[k] = f;
      scopes[k] = scope;
    }
  };
  add(SCHEMA.selection as unknown as Group, 'selection');
  for (const [p, g] of Object.entries(SCHEMA.panels)) add(g as unknown as Group, p as PanelId);
  add(SCHEMA.layout as unknown as Group, 'layout');
  add(SCHEMA.runtime as unknown as Group, 'runtime');
  return { fields, scopes };
}

const flat = flatten();

/** Every field by key. */
export const FIELDS = flat.fields as { [K in Key]: Field<State[K]> };
/** Every key in schema order. */
export const KEYS = Object.keys(FIELDS) as Key[];
/** The group of every key. */
export const SCOPES = flat.scopes as Record<Key, Scope>;

/** The state with every key at its default. */
export function defaults(): State {
  const s: Record<string, unknown> = {};
  for (const k of KEYS) s[k] = FIELDS[k].default;
  return s as State;
}

type AllFields = typeof SCHEMA.selection & UnionToIntersection<Panels[PanelId]> & typeof SCHEMA.layout & typeof SCHEMA.runtime;
/** Keys whose allowed values are listed (their controls are `<select>`s). */
export type EnumKey = { [K in Key]: AllFields[K] extends { readonly choices: readonly unknown[] } ? K : never }[Key];

/** The keys whose value does not fit the run (to be set back to their defaults). */
export function misfits(s: State, env: Env): Partial<State> {
  const patch: Record<string, unknown> = {};
  for (const k of KEYS) {
    const f = FIELDS[k] as Field<unknown>;
    if (s[k] !== f.default && !f.fits(s[k], env)) patch[k] = f.default;
  }
  return patch as Partial<State>;
}

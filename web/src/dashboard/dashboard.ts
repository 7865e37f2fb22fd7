// A dashboard file served with `perfscape serve RUN --dashboard FILE` (GET /api/dashboard/{i}),
// or the page's own layout (GET /api/layout: the built-in dashboard file, or `--layout FILE`):
// its grid of panels (`columns` columns of relative `widths`, each panel spanning `span` of
// them, `height` pixels or `height_vh` percent of the window high), each an SQL panel
// (./sqlpanel.ts) or a built-in view, and its reload: when the file changes, the server says so
// on the WebSocket and the grid is drawn again in place; panels whose definition did not change
// keep their view (a live trend keeps growing), the others are made anew.

import type { Dashboard } from '../api/Dashboard';
import type { DashboardPanel } from '../api/DashboardPanel';
import type { SpecError } from '../api/SpecError';
import { api } from '../client';
import type { Context, View } from '../context';
import { esc } from '../format';
import { Panel, type PanelDef } from '../panel';
import { FIELDS } from '../schema';
import { type Key, store } from '../state';
import { SqlView } from './sqlpanel';

/** A dashboard file's error as `file:line:column: message`. */
export function specText(e: SpecError): string {
  return e.line > 0 ? `${e.file}:${e.line}:${e.column}: ${e.message}` : `${e.file}: ${e.message}`;
}

/** `a`, `b`, ..., `z`, `aa`, `ab`, ...: panel ids are lowercase letters only (`focus`). */
export function letters(i: number): string {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(97 + ((n - 1) % 26)) + s;
  return s;
}

/** The panel ids of a dashboard's panels: a built-in view's own id (its settings and CSS
 * follow it; a second one of the same view gets letters added), else `dash` and letters of
 * its place (`dasha`, `dashb`, ...). */
export function panelIds(d: Dashboard): string[] {
  const used = new Set<string>();
  return d.panels.map((p, i) => {
    let id = `dash${letters(i)}`;
    if (p.view && !p.error && /^[a-z]+$/.test(p.view)) {
      id = p.view;
      for (let k = 0; used.has(id); k++) id = `${p.view}${letters(k)}`;
    }
    used.add(id);
    return id;
  });
}

/** A dashboard's event on the WebSocket (`{"event":"dashboard","index":N,"revision":R}`,
 * index null for the layout file), or null for any other event. */
export function dashboardEvent(ev: unknown): { index: number | null; revision: number } | null {
  const e = ev as { event?: unknown; index?: unknown; revision?: unknown } | null;
  if (!e || e.event !== 'dashboard' || (typeof e.index !== 'number' && e.index !== null)) return null;
  return { index: e.index, revision: typeof e.revision === 'number' ? e.revision : -1 };
}

/** The grid column spans of panels of `spans` (each at most `columns`) placed in order, left
 * to right: a panel with `fill` spans the rest of its row. */
export function placeSpans(items: readonly { span: number; fill: boolean }[], columns: number): number[] {
  let col = 0;
  return items.map(({ span, fill }) => {
    let n = Math.max(1, Math.min(columns, span));
    if (col + n > columns) col = 0;
    if (fill) n = columns - col;
    col = (col + n) % columns;
    return n;
  });
}

/** One panel of the grid: its id (`focus`, `#panel-<id>`), what defines it, its element and
 * its view (none for a panel showing an error). */
interface Entry {
  id: string;
  key: string;
  section: HTMLElement;
  view: View | null;
}

const ALL = (): Set<Key> => new Set(Object.keys(FIELDS) as Key[]);

/** A dashboard drawn in the page: a served dashboard (`index` its place), or the page's layout
 * (`index` null). */
export class Board {
  /** The grid element (`main.dash`), put in the page by the caller. */
  readonly grid: HTMLElement;
  /** The revision drawn (-1 before the first answer). */
  revision = -1;
  /** How many times it was drawn (for tests: a reload draws again). */
  draws = 0;
  private bar: HTMLElement;
  private entries: Entry[] = [];
  private ctl: AbortController | null = null;
  private disposed = false;

  constructor(
    /** Its place among the served dashboards; null for the page's layout. */
    readonly index: number | null,
    private readonly ctx: Context,
    /** The page's views by panel id: the board's own are added and removed here. */
    private readonly views: Map<string, View>,
    /** The built-in views a panel may name (`view = "trend"`). */
    private readonly defs: readonly PanelDef[],
    /** Told the ids of the panels shown after each drawing. */
    private readonly shown: (ids: string[]) => void,
  ) {
    this.grid = document.createElement('main');
    this.grid.className = index === null ? 'dash layout' : 'dash';
    this.grid.dataset.dashboard = String(index ?? 'layout');
    this.bar = document.createElement('div');
    this.bar.className = 'dash-bar';
    // The page's layout has no bar of its own (the header names the run).
    if (index !== null) {
      this.grid.appendChild(this.bar);
      const info = ctx.run.dashboards[index];
      this.head(info?.title ?? `dashboard ${index}`, info?.path ?? '', null);
    }
  }

  /** Fetches the dashboard and draws it (again); a newer call supersedes an older one. `got`:
   * its answer when the caller has it already. */
  async load(got: Dashboard | null = null): Promise<void> {
    this.ctl?.abort();
    const ctl = new AbortController();
    this.ctl = ctl;
    let d: Dashboard;
    try {
      d = got ?? (await (this.index === null ? api.layout(ctl.signal) : api.dashboard(this.index, ctl.signal)));
    } catch (e) {
      if (ctl.signal.aborted || this.disposed) return;
      console.error(e);
      this.clear();
      this.grid.querySelector('.dash-error')?.remove();
      this.fileError(e instanceof Error ? e.message : String(e));
      this.shown([]);
      return;
    }
    if (ctl.signal.aborted || this.disposed) return;
    if (this.draws === 0) await this.pickEvent();
    if (ctl.signal.aborted || this.disposed) return;
    await this.render(d);
  }

  /** As the built-in page (its ranked table), a dashboard starts with the top event selected
   * when none is: its panels using `$event` and its views then show something. */
  private async pickEvent(): Promise<void> {
    const s = store.get();
    if (s.event !== null) return;
    try {
      const top = (await this.ctx.events(s)).rows[0];
      if (top && store.get().event === null) store.set({ event: top.id });
    } catch (e) {
      console.error(e);
    }
  }

  private head(title: string, path: string, revision: number | null): void {
    this.bar.innerHTML = `<b>${esc(title)}</b> <span class="muted" title="${esc(path)}">${esc(path)}</span>${revision === null ? '' : ` <small>revision ${revision}</small>`}`;
  }

  /** Draws dashboard `d`: keeps the panels whose definition and place did not change, makes
   * the others, and lets every new view draw once. */
  private async render(d: Dashboard): Promise<void> {
    this.revision = d.revision;
    this.draws++;
    this.grid.dataset.revision = String(d.revision);
    const columns = Math.max(1, Math.min(4, d.columns));
    this.grid.style.setProperty('--cols', String(columns));
    const widths = d.widths.length === columns ? d.widths : Array<number>(columns).fill(1);
    this.grid.style.gridTemplateColumns = widths.map((w) => `minmax(0, ${w}fr)`).join(' ');
    this.head(d.title, d.path, d.revision);
    if (this.index !== null) {
      // The header's choice of dashboards shows the title as it is now.
      const opt = document.querySelector<HTMLOptionElement>(`select[data-key="dashboard"] option[value="${this.index}"]`);
      if (opt) opt.textContent = d.title;
      const info = this.ctx.run.dashboards[this.index];
      if (info) Object.assign(info, { title: d.title, revision: d.revision });
    }
    this.grid.querySelector('.dash-error')?.remove();
    if (d.error) {
      this.clear();
      this.fileError(specText(d.error));
      this.shown([]);
      return;
    }
    const ids = panelIds(d);
    // An optional built-in view with nothing to show for this run is left out.
    const wanted = d.panels
      .map((p, i) => {
        const { index: _index, ...def } = p;
        return { p, id: ids[i], key: `${ids[i]} ${d.columns} ${JSON.stringify(def)}` };
      })
      .filter(({ p }) => !(p.optional && !p.error && !this.hasData(p.view)));
    const spans = placeSpans(
      wanted.map(({ p }) => ({ span: p.span, fill: p.fill })),
      columns,
    );
    const keys = new Set(wanted.map((w) => w.key));
    const old = new Map<string, Entry>();
    for (const e of this.entries) {
      if (keys.has(e.key) && !old.has(e.key)) old.set(e.key, e);
      else this.drop(e);
    }
    const made: Entry[] = [];
    this.entries = wanted.map((w) => {
      const kept = old.get(w.key);
      if (kept) return kept;
      const e = this.make(w.p, w.id, d.columns, w.key);
      made.push(e);
      return e;
    });
    this.entries.forEach((e, i) => {
      e.section.style.setProperty('--span', String(spans[i]));
      this.grid.appendChild(e.section);
      if (e.view) this.views.set(e.id, e.view);
    });
    this.shown(this.entries.map((e) => e.id));
    const s = store.get();
    await Promise.all(made.map((e) => (e.view ? Promise.resolve(e.view.update(s, ALL())).catch((err) => console.error(err)) : undefined)));
  }

  /** True unless `view` names a built-in view with nothing to show for this run. */
  private hasData(view: string | null): boolean {
    const def = view ? this.defs.find((x) => x.id === view) : undefined;
    return !def?.when || def.when(this.ctx);
  }

  /** Makes the panel of `p`: its error in its place, a built-in view, or an SQL panel. */
  private make(p: DashboardPanel, id: string, columns: number, key: string): Entry {
    const def = p.view ? this.defs.find((x) => x.id === p.view) : undefined;
    // A built-in view without a title of its own (the server names it by its id) has the
    // page's title of that view.
    const title = (p.title && p.title !== p.view ? p.title : def?.title) || p.view || `panel ${p.index + 1}`;
    const panel = new Panel(id, title, this.ctx);
    const s = panel.section;
    s.classList.add('dash-panel');
    s.style.setProperty('--span', String(Math.max(1, Math.min(columns, p.span || 1))));
    s.style.setProperty('--h', p.height_vh ? `${p.height_vh}vh` : `${Math.max(80, p.height || 300)}px`);
    s.dataset.source = p.source;
    let view: View | null = null;
    const problem = (text: string) => {
      s.classList.add('has-spec-error');
      const div = document.createElement('div');
      div.className = 'error spec-error';
      div.textContent = text;
      panel.body.appendChild(div);
    };
    if (p.error) problem(specText(p.error));
    else if (p.view) {
      if (!def) problem(`${p.source}: unknown view \`${p.view}\` (one of: ${this.defs.map((x) => x.id).join(', ')})`);
      else if (def.when && !def.when(this.ctx)) {
        const note = document.createElement('div');
        note.className = 'sql-empty';
        note.textContent = `The built-in view \`${def.id}\` has nothing to show for this run (${def.title}).`;
        panel.body.appendChild(note);
      } else view = new def.view(panel);
    } else if (p.sql) view = new SqlView(panel, p);
    else problem(`${p.source}: the panel has neither \`sql\` nor \`view\``);
    return { id, key, section: s, view };
  }

  /** Takes entry `e` off the page and frees its view. */
  private drop(e: Entry): void {
    if (this.views.get(e.id) === e.view) this.views.delete(e.id);
    e.view?.dispose?.();
    e.section.remove();
  }

  private clear(): void {
    for (const e of this.entries) this.drop(e);
    this.entries = [];
  }

  /** The whole file could not be read: its error in place of the panels. */
  private fileError(text: string): void {
    const div = document.createElement('div');
    div.className = 'error dash-error';
    div.textContent = text;
    this.grid.appendChild(div);
  }

  /** Frees every panel and takes the grid off the page. */
  dispose(): void {
    this.disposed = true;
    this.ctl?.abort();
    this.clear();
    this.grid.remove();
  }
}

// An SQL panel of a dashboard: asks `POST /api/sql` for its query with the selection's values
// of the placeholders it uses, and draws the rows with its component (./components.ts). It asks
// again when a selection key its query uses changes (`$event`, `$thread`, `$sample`, `$metric`,
// `$run`: the compare panel's B) and when a live run gets new samples (`revision`). A click on
// a datum sets the selection keys of its `select` from that row.

import { KEY_OF, type ParamKey, SELECT_KEYS, type SelectKey, placeholders } from '../placeholders';
import type * as echarts from 'echarts';
import type { DashboardPanel } from '../api/DashboardPanel';
import type { SqlParams } from '../api/SqlParams';
import { ApiError, api } from '../client';
import { toCsv } from '../export';
import type { Env, Field } from '../fields';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { FIELDS } from '../schema';
import { type Key, type State, store } from '../state';
import { type Cell, COMPONENTS, type Drawing, type HtmlHost, Rows, num } from './components';

/** Where a panel is defined, for its messages: `file:line`. */
function where(p: DashboardPanel): string {
  return p.source;
}

/** A dashboard panel drawing the rows of an SQL query. */
export class SqlView extends PanelView {
  private readonly uses: ParamKey[];
  private readonly selects: [SelectKey, string][];
  private plot: echarts.ECharts | null = null;
  private host: HTMLDivElement | null = null;
  private note: HTMLDivElement;
  private status: HTMLDivElement;
  private info: HTMLSpanElement;
  private rows: Rows | null = null;
  private drawing: Drawing | null = null;
  private sort: HtmlHost['sort'] = { col: null, desc: false };

  constructor(
    panel: Panel,
    readonly spec: DashboardPanel,
  ) {
    super(panel);
    this.uses = placeholders(spec.sql ?? '');
    this.selects = Object.entries(spec.select).filter((e): e is [SelectKey, string] => (SELECT_KEYS as readonly string[]).includes(e[0]) && typeof e[1] === 'string');
    panel.section.title = `${spec.title}\n${where(spec)}`;
    this.info = document.createElement('span');
    this.info.className = 'sql-info';
    this.tools.appendChild(this.info);
    const comp = COMPONENTS[spec.component ?? 'table'];
    if (comp.kind === 'chart') {
      const plot = this.chart(panel.id);
      this.plot = plot;
      plot.on('click', (ev) => {
        const row = this.drawing?.rowOf(ev as unknown as { dataIndex: number; data: unknown });
        if (row !== null && row !== undefined) this.pick(row);
      });
      plot.getZr().on('click', (ev) => {
        if (ev.target || !this.drawing?.rowAt) return;
        const row = this.drawing.rowAt(plot, [ev.offsetX, ev.offsetY]);
        if (row !== null) this.pick(row);
      });
    } else {
      this.host = this.div('scroll');
    }
    this.note = this.div('sql-empty');
    this.note.hidden = true;
    this.status = this.div('note status');
    this.status.hidden = true;
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const ask = this.uses.some((k) => changed.has(KEY_OF[k])) || changed.has('revision') || this.rows === null;
    if (!ask) {
      // The selection moved: the table marks its rows again.
      if (this.host && this.rows && this.selects.some(([k]) => changed.has(k))) this.markSelected();
      return;
    }
    // `$run`: the compare panel's B, when the page serves runs side by side.
    const run = this.ctx.run.compared.length > 0 ? s.cmp : null;
    const params: SqlParams = { event: s.event, thread: s.thread, sample: s.sample, metric: s.metric, run };
    const spec = this.spec;
    const answer = await this.load((signal) =>
      api.sql({ query: spec.sql ?? '', over: spec.over ?? undefined, params }, signal).catch((e: unknown) => {
        if (e instanceof ApiError) throw new Error(`${where(spec)}: the query failed: ${e.detail}`);
        throw e;
      }),
    );
    if (answer === SUPERSEDED) return;
    this.rows = new Rows(answer);
    this.draw();
  }

  protected onResize(): void {
    // Label lengths and margins follow the panel's size.
    if (this.plot && this.rows) this.draw();
  }

  /** Draws the rows with the panel's component; an empty answer says so. */
  private draw(): void {
    const rows = this.rows;
    if (!rows) return;
    const n = rows.rows.length;
    this.info.textContent = `${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'}${rows.truncated ? ' (truncated)' : ''} · ${Math.round(rows.elapsedMs)} ms`;
    this.status.hidden = !rows.truncated;
    this.status.textContent = rows.truncated ? `The answer was truncated: only its first ${n.toLocaleString('en-US')} rows are drawn. Narrow the query (WHERE, LIMIT, GROUP BY).` : '';
    this.note.hidden = n > 0;
    this.note.textContent = n > 0 ? '' : 'no rows: the query answered nothing (for this selection)';
    const comp = COMPONENTS[this.spec.component ?? 'table'];
    try {
      if (n === 0) {
        this.drawing = null;
        this.plot?.clear();
        if (this.host) this.host.innerHTML = '';
        return;
      }
      if (comp.kind === 'chart' && this.plot) {
        this.drawing = comp.draw(this.spec, rows, { width: this.plot.getWidth(), height: this.plot.getHeight() });
        this.plot.setOption(this.drawing.option, true);
      } else if (comp.kind === 'html' && this.host) {
        const view = this;
        const host: HtmlHost = {
          el: this.host,
          pick: (row) => this.pick(row),
          selected: (row) => this.isSelected(row),
          // Kept by the view: a header click re-sorts, and the next answer keeps that sort.
          get sort() {
            return view.sort;
          },
          set sort(v) {
            view.sort = v;
          },
        };
        comp.draw(this.spec, rows, host);
      }
      this.panel.showError(null);
    } catch (e) {
      this.drawing = null;
      this.plot?.clear();
      this.panel.showError(new Error(`${where(this.spec)}: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** The selection value of column `col` of row `row` for key `k` (null: not a valid one). */
  private valueFor(k: SelectKey, row: number, col: string): State[SelectKey] | undefined {
    const rows = this.rows;
    if (!rows) return undefined;
    const i = rows.col(col, `select.${k}`);
    const v: Cell = rows.rows[row]?.[i] ?? null;
    let out: unknown;
    if (k === 'thread') {
      // A thread as `N.C.T`; a thread number (the tables' `thread`) is looked up in the run.
      out = v === null ? null : typeof v === 'number' ? (this.ctx.run.thread_ids[v] ?? undefined) : String(v);
    } else {
      out = v === null ? null : num(v);
    }
    const f = FIELDS[k] as Field<unknown>;
    const env: Env = { run: this.ctx.run, panels: [] };
    if (out === undefined || !f.valid(out) || !f.fits(out, env)) return undefined;
    return out as State[SelectKey];
  }

  /** Sets the selection from row `row` (the panel's `select`). */
  private pick(row: number): void {
    if (!this.selects.length) return;
    const patch: Record<string, unknown> = {};
    try {
      for (const [k, col] of this.selects) {
        const v = this.valueFor(k, row, col);
        if (v !== undefined) patch[k] = v;
      }
    } catch (e) {
      this.panel.showError(new Error(`${where(this.spec)}: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    store.set(patch as Partial<State>);
  }

  /** True when row `row` holds the selection's values in every `select` column. */
  private isSelected(row: number): boolean {
    if (!this.selects.length) return false;
    const s = store.get();
    try {
      return this.selects.every(([k, col]) => {
        const v = this.valueFor(k, row, col);
        return v !== undefined && v !== null && v === s[k];
      });
    } catch {
      return false;
    }
  }

  private markSelected(): void {
    for (const tr of this.host?.querySelectorAll<HTMLElement>('tr[data-row]') ?? []) tr.classList.toggle('selected', this.isSelected(Number(tr.dataset.row)));
  }

  /** The rows of the answer (all its columns), for the save menu. */
  csv(): string | null {
    return this.rows ? toCsv(this.rows.names, this.rows.rows) : null;
  }
}

// Ranked event table: rank, name, source, sum, percent, mean, min/max with thread, imbalance.
// A metric that does not add up (a minimum, maximum, mean) has its own total across threads
// (the column says which) and no percentage of the run.
// Sortable by any column, filterable by name or group; a click selects the event.
// The rank and name columns stay in place when the table scrolls right; the columns shown are
// the user's choice (`cols`), or fitted to the panel's width: the columns that answer "which
// thread is slow" (Max with its thread, Imbalance, Calls) are kept, the others left out first.
// Callpaths read leaf first (`… => caller => leaf`), told apart, whole on hover.

import type { Combine } from '../api/Combine';
import type { EventRow } from '../api/EventRow';
import type { EventsResponse } from '../api/EventsResponse';
import { api } from '../client';
import { revealIn } from '../context';
import { searchFor } from '../controls';
import { toCsv } from '../export';
import { count, esc, pathLabels, percent, ratio, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

type Col = { key: string; label: string; num: boolean; get: (r: EventRow) => number | string; show: (r: EventRow, unit: string) => string };

const thread = (t: string | null) => (t ? ` <small>${esc(threadName(t))}</small>` : '');

/** Each event's category (by event id), from `/api/categories` for the metric shown; empty
 * for a metric that has no categories (one that does not add up). */
let CATEGORY = new Map<number, string>();

const COLS: Col[] = [
  { key: 'rank', label: '#', num: true, get: (r) => r.rank, show: (r) => String(r.rank) },
  // The name cell's text is the row's label (pathLabels), set in `draw`.
  { key: 'name', label: 'Event', num: false, get: (r) => r.name, show: () => '' },
  { key: 'source', label: 'Source', num: false, get: (r) => r.source_file ?? '', show: (r) => esc(r.source_file ? `${r.source_file.split('/').pop()}:${r.source_line}` : '') },
  { key: 'sum', label: 'Sum', num: true, get: (r) => r.stats.total ?? -Infinity, show: (r, u) => value(r.stats.total, u) },
  {
    key: 'percent',
    label: '%',
    num: true,
    get: (r) => r.percent ?? -Infinity,
    show: (r) => (r.percent === null ? '–' : `${percent(r.percent)} <span class="bar" data-w="${Math.min(40, r.percent * 0.4)}"></span>`),
  },
  { key: 'mean', label: 'Mean', num: true, get: (r) => r.stats.mean, show: (r, u) => value(r.stats.mean, u) },
  { key: 'min', label: 'Min', num: true, get: (r) => r.stats.min, show: (r, u) => `${value(r.stats.min, u)}${thread(r.stats.min_thread)}` },
  { key: 'max', label: 'Max', num: true, get: (r) => r.stats.max, show: (r, u) => `${value(r.stats.max, u)}${thread(r.stats.max_thread)}` },
  { key: 'imbalance', label: 'Imbalance', num: true, get: (r) => r.stats.imbalance, show: (r) => ratio(r.stats.imbalance) },
  { key: 'calls', label: 'Calls', num: true, get: (r) => r.calls, show: (r) => count(r.calls) },
  { key: 'category', label: 'Category', num: false, get: (r) => CATEGORY.get(r.id) ?? '', show: (r) => esc(CATEGORY.get(r.id) ?? '') },
];

/** The longest and shortest labels of the name column (characters). */
const NAME_MAX = 44;
const NAME_MIN = 18;
/** While the table is wider than its panel, in this order: a column left out (fitted layout
 * only; name, Max, Imbalance and Calls always stay) or the names shortened to a length. */
const FIT: (string | number)[] = ['category', 'source', 'min', 'mean', 36, 'sum', 30, 'rank', 26, 'percent', 22, NAME_MIN];

/** The column keys of a `cols` value (null: fitted to the width); the name is always shown. */
function chosen(cols: string): string[] | null {
  if (!cols) return null;
  const keys = cols.split(',');
  return COLS.filter((c) => c.key === 'name' || keys.includes(c.key)).map((c) => c.key);
}

/** The title of the total column: `Sum` for values that add up, else the metric's own
 * combination across threads (`Total (min)`, ...). */
function totalLabel(c: Combine): string {
  return c === 'sum' ? 'Sum' : c === 'not_combinable' ? 'Total' : `Total (${c})`;
}

/** The ranked event table; a click selects the event. */
export class RankedView extends PanelView {
  private data: EventsResponse | null = null;
  /** Bumped with each new answer (the fitted layout belongs to one). */
  private seq = 0;
  private sortKey = 'rank';
  private sortDesc = false;
  private scroll: HTMLDivElement;
  private first = true;
  /** The columns and name length fitted for an answer, settings and width. */
  private fitted: { key: string; cols: string[]; budget: number } | null = null;
  /** What is drawn now (for the column picker and CSV). */
  private shown: { rows: EventRow[]; cols: Col[] } = { rows: [], cols: [] };
  private picker: HTMLDetailsElement;

  constructor(panel: Panel) {
    super(panel);
    this.scroll = this.div('scroll');
    this.picker = this.columnPicker();
    this.tools.append(searchFor('filter', { owner: this }), this.picker);
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'callpaths')) {
      void this.loadCategories(s);
      const d = await this.load(() => this.ctx.events(s));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.seq++;
      if (this.first && this.state().event === null && d.rows.length) {
        this.first = false;
        store.set({ event: d.rows[0].id });
        return; // the store's notification redraws
      }
      this.first = false;
      this.render(this.state());
    } else if (touched(changed, 'filter', 'event', 'cols')) {
      this.render(s);
    }
  }

  protected onResize(): void {
    this.render(this.state());
  }

  /** The events' categories for the metric of `s` (the `category` column); a metric without
   * categories leaves the column empty. */
  private async loadCategories(s: State): Promise<void> {
    try {
      const c = await api.categories(s, null, 16);
      const names = new Map<number, string>();
      c.event_category.forEach((k, e) => names.set(e, c.categories[k]?.name ?? ''));
      CATEGORY = names;
    } catch {
      CATEGORY = new Map();
    }
    this.fitted = null;
    this.render(this.state());
  }

  /** The panel's rows as CSV: the columns shown, names whole, threads as `N.C.T`, values in
   * the answer's unit. */
  csv(): string | null {
    const d = this.data;
    if (!d) return null;
    const header: string[] = [];
    const cells: ((r: EventRow) => unknown)[] = [];
    for (const c of this.shown.cols) {
      const label = c.key === 'sum' ? totalLabel(d.combine) : c.label;
      if (c.key === 'min' || c.key === 'max') {
        header.push(`${label} (${d.unit})`, `${label} thread`);
        cells.push(c.get, (r) => (c.key === 'min' ? r.stats.min_thread : r.stats.max_thread) ?? '');
      } else {
        header.push(c.num && !['rank', 'percent', 'imbalance', 'calls'].includes(c.key) ? `${label} (${d.unit})` : label);
        cells.push(c.key === 'source' ? (r) => (r.source_file ? `${r.source_file}:${r.source_line}` : '') : (r) => { const v = c.get(r); return v === -Infinity ? '' : v; });
      }
    }
    return toCsv(header, this.shown.rows.map((r) => cells.map((f) => f(r))));
  }

  /** The "columns" control: a checkbox per column (the name always shown) and "fit to width". */
  private columnPicker(): HTMLDetailsElement {
    const det = document.createElement('details');
    det.className = 'colpick';
    det.dataset.key = 'cols';
    det.title = 'columns shown';
    const sum = document.createElement('summary');
    sum.textContent = 'columns';
    const menu = document.createElement('div');
    menu.className = 'colpick-menu';
    for (const c of COLS) {
      if (c.key === 'name') continue;
      const lab = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = c.key;
      box.addEventListener('change', () => {
        const now = this.shown.cols.map((x) => x.key);
        const next = COLS.filter((x) => x.key === 'name' || (x.key === c.key ? box.checked : now.includes(x.key))).map((x) => x.key);
        store.set({ cols: next.join(',') });
      });
      lab.append(box, ` ${c.key === 'rank' ? '# (rank)' : c.key === 'percent' ? '% of the run' : c.label}`);
      menu.appendChild(lab);
    }
    const fit = document.createElement('button');
    fit.type = 'button';
    fit.className = 'colpick-fit';
    fit.textContent = 'fit to the panel';
    fit.title = 'the columns that fit the panel width (Max, Imbalance and Calls first)';
    fit.addEventListener('click', () => store.set({ cols: '' }));
    menu.appendChild(fit);
    det.append(sum, menu);
    // Closed by a click elsewhere.
    const close = (e: MouseEvent) => {
      if (det.open && !det.contains(e.target as Node)) det.open = false;
    };
    document.addEventListener('click', close);
    this.own(() => document.removeEventListener('click', close));
    return det;
  }

  private render(s: State): void {
    const data = this.data;
    if (!data) return;
    const f = s.filter.toLowerCase();
    let rows = data.rows.filter((r) => !f || r.name.toLowerCase().includes(f) || r.groups.some((g) => g.toLowerCase().includes(f)));
    const col = COLS.find((c) => c.key === this.sortKey) ?? COLS[0];
    rows = [...rows].sort((a, b) => {
      const x = col.get(a);
      const y = col.get(b);
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return this.sortDesc ? -c : c;
    });
    // No source column when no event has a source location.
    const hasSource = data.rows.some((r) => r.source_file);
    const offered = COLS.filter((c) => c.key !== 'source' || hasSource);
    const explicit = chosen(s.cols);
    const width = this.scroll.clientWidth;
    const key = `${this.seq}|${s.cols}|${s.filter}|${width}`;
    if (this.fitted?.key === key) {
      this.draw(s, rows, offered.filter((c) => this.fitted?.cols.includes(c.key)), this.fitted.budget);
    } else {
      let cols = explicit ? offered.filter((c) => explicit.includes(c.key)) : offered;
      let budget = NAME_MAX;
      this.draw(s, rows, cols, budget);
      // Fit the panel's width (not while the panel is hidden): leave out columns (fitted
      // layout only), then shorten the names.
      for (const step of FIT) {
        if (width === 0 || !this.overflows()) break;
        if (typeof step === 'number') {
          if (step >= budget) continue;
          budget = step;
        } else {
          if (explicit || !cols.some((c) => c.key === step)) continue;
          cols = cols.filter((c) => c.key !== step);
        }
        this.draw(s, rows, cols, budget);
      }
      // Room left over (a column went): longer names again, while they fit.
      if (width > 0 && budget < NAME_MAX && !this.overflows()) {
        for (let longer = budget + 4; longer <= NAME_MAX; longer += 4) {
          this.draw(s, rows, cols, longer);
          if (this.overflows()) break;
          budget = longer;
        }
        this.draw(s, rows, cols, budget);
      }
      if (width > 0) this.fitted = { key, cols: cols.map((c) => c.key), budget };
    }
    // The picker shows what is shown.
    const keys = this.shown.cols.map((c) => c.key);
    this.picker.querySelectorAll<HTMLInputElement>('input[type="checkbox"]').forEach((b) => {
      b.checked = keys.includes(b.value);
      b.disabled = b.value === 'source' && !hasSource;
    });
    this.picker.classList.toggle('chosen', explicit !== null);
    this.picker.querySelector('summary')!.textContent = explicit ? 'columns*' : 'columns';
  }

  /** True when the table is wider than the panel (it would need a horizontal scroll). */
  private overflows(): boolean {
    const t = this.scroll.querySelector('table');
    return !!t && t.offsetWidth > this.scroll.clientWidth + 1;
  }

  private draw(s: State, rows: EventRow[], cols: Col[], budget: number): void {
    const data = this.data;
    if (!data) return;
    this.shown = { rows, cols };
    const unit = data.unit;
    const labels = pathLabels(
      rows.map((r) => r.name),
      budget,
    );
    const label = (c: Col) => (c.key === 'sum' ? totalLabel(data.combine) : c.label);
    const pin = (c: Col) => (c.key === 'rank' || c.key === 'name' ? ` pin pin-${c.key}` : '');
    const head = cols
      .map(
        (c) =>
          `<th class="${c.num ? 'num' : ''}${pin(c)}" data-key="${c.key}"${c.key === 'percent' && data.run_total === null ? ' title="no share of the run: the metric does not add up"' : ''}>${label(c)}${c.key === this.sortKey ? (this.sortDesc ? ' ▼' : ' ▲') : ''}</th>`,
      )
      .join('');
    const body = rows
      .map(
        (r, i) =>
          `<tr data-id="${r.id}" class="${r.id === s.event ? 'selected' : ''}" title="${esc(r.name)}\n${esc(r.groups.join(' | '))}">${cols
            .map((c) =>
              c.key === 'name'
                ? `<td class="name${pin(c)}" title="${esc(r.name)}">${esc(labels[i])}</td>`
                : `<td class="${c.num ? 'num' : ''}${pin(c)}">${c.show(r, unit)}</td>`,
            )
            .join('')}</tr>`,
      )
      .join('');
    this.scroll.innerHTML = `<table class="data ranked"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
    const table = this.scroll.querySelector<HTMLTableElement>('table');
    // The name column is pinned right of the rank column (its width through the CSSOM: no
    // inline style attributes under the page's CSP).
    const rankTh = this.scroll.querySelector<HTMLElement>('th.pin-rank');
    table?.style.setProperty('--pin-left', `${rankTh ? rankTh.offsetWidth : 0}px`);
    this.scroll.querySelectorAll<HTMLElement>('.bar[data-w]').forEach((b) => (b.style.width = `${b.dataset.w}px`));
    this.scroll.querySelectorAll('th').forEach((th) =>
      th.addEventListener('click', () => {
        const key = th.dataset.key ?? 'rank';
        this.sortDesc = key === this.sortKey ? !this.sortDesc : key !== 'name' && key !== 'rank' && key !== 'source';
        this.sortKey = key;
        this.render(store.get());
      }),
    );
    this.scroll.querySelectorAll<HTMLTableRowElement>('tbody tr').forEach((tr) =>
      tr.addEventListener('click', () => store.set({ event: Number(tr.dataset.id) })),
    );
    const sel = this.scroll.querySelector<HTMLElement>('tr.selected');
    revealIn(this.scroll, sel);
  }
}

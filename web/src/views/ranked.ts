// Ranked event table: rank, name, source, sum, percent, mean, min/max with thread, imbalance.
// A metric that does not add up (a minimum, maximum, mean) has its own total across threads
// (the column says which) and no percentage of the run.
// Sortable by any column, filterable by name or group; a click selects the event.

import type { Combine } from '../api/Combine';
import type { EventRow } from '../api/EventRow';
import type { EventsResponse } from '../api/EventsResponse';
import { revealIn } from '../context';
import { searchFor } from '../controls';
import { count, esc, percent, ratio, shorten, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

type Col = { key: string; label: string; num: boolean; get: (r: EventRow) => number | string; show: (r: EventRow, unit: string) => string };

const COLS: Col[] = [
  { key: 'rank', label: '#', num: true, get: (r) => r.rank, show: (r) => String(r.rank) },
  { key: 'name', label: 'Event', num: false, get: (r) => r.name, show: (r) => esc(shorten(r.name, 44)) },
  { key: 'source', label: 'Source', num: false, get: (r) => r.source_file ?? '', show: (r) => esc(r.source_file ? `${r.source_file.split('/').pop()}:${r.source_line}` : '') },
  { key: 'sum', label: 'Sum', num: true, get: (r) => r.stats.total ?? -Infinity, show: (r, u) => value(r.stats.total, u) },
  {
    key: 'percent',
    label: '%',
    num: true,
    get: (r) => r.percent ?? -Infinity,
    show: (r) => (r.percent === null ? '–' : `${percent(r.percent)} <span class="bar" data-w="${Math.min(60, r.percent * 0.6)}"></span>`),
  },
  { key: 'mean', label: 'Mean', num: true, get: (r) => r.stats.mean, show: (r, u) => value(r.stats.mean, u) },
  { key: 'min', label: 'Min', num: true, get: (r) => r.stats.min, show: (r, u) => `${value(r.stats.min, u)} <small>${esc(r.stats.min_thread ?? '')}</small>` },
  { key: 'max', label: 'Max', num: true, get: (r) => r.stats.max, show: (r, u) => `${value(r.stats.max, u)} <small>${esc(r.stats.max_thread ?? '')}</small>` },
  { key: 'imbalance', label: 'Imbalance', num: true, get: (r) => r.stats.imbalance, show: (r) => ratio(r.stats.imbalance) },
  { key: 'calls', label: 'Calls', num: true, get: (r) => r.calls, show: (r) => count(r.calls) },
];

/** The title of the total column: `Sum` for values that add up, else the metric's own
 * combination across threads (`Total (min)`, ...). */
function totalLabel(c: Combine): string {
  return c === 'sum' ? 'Sum' : c === 'not_combinable' ? 'Total' : `Total (${c})`;
}

/** The ranked event table; a click selects the event. */
export class RankedView extends PanelView {
  private data: EventsResponse | null = null;
  private sortKey = 'rank';
  private sortDesc = false;
  private scroll: HTMLDivElement;
  private first = true;

  constructor(panel: Panel) {
    super(panel);
    this.scroll = this.div('scroll');
    this.tools.appendChild(searchFor('filter', { owner: this }));
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'callpaths')) {
      const d = await this.load(() => this.ctx.events(s));
      if (d === SUPERSEDED) return;
      this.data = d;
      if (this.first && this.state().event === null && d.rows.length) {
        this.first = false;
        store.set({ event: d.rows[0].id });
        return; // the store's notification redraws
      }
      this.first = false;
      this.render(this.state());
    } else if (touched(changed, 'filter', 'event')) {
      this.render(s);
    }
  }

  private render(s: State): void {
    const data = this.data;
    if (!data) return;
    const unit = data.unit;
    const f = s.filter.toLowerCase();
    let rows = data.rows.filter((r) => !f || r.name.toLowerCase().includes(f) || r.groups.some((g) => g.toLowerCase().includes(f)));
    const col = COLS.find((c) => c.key === this.sortKey) ?? COLS[0];
    rows = [...rows].sort((a, b) => {
      const x = col.get(a);
      const y = col.get(b);
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return this.sortDesc ? -c : c;
    });
    // Hide the source column when no event has a source location.
    const cols = COLS.filter((c) => c.key !== 'source' || rows.some((r) => r.source_file));
    const label = (c: Col) => (c.key === 'sum' ? totalLabel(data.combine) : c.label);
    const head = cols
      .map((c) => `<th class="${c.num ? 'num' : ''}" data-key="${c.key}"${c.key === 'percent' && data.run_total === null ? ' title="no share of the run: the metric does not add up"' : ''}>${label(c)}${c.key === this.sortKey ? (this.sortDesc ? ' ▼' : ' ▲') : ''}</th>`)
      .join('');
    const body = rows
      .map(
        (r) =>
          `<tr data-id="${r.id}" class="${r.id === s.event ? 'selected' : ''}" title="${esc(r.name)}\n${esc(r.groups.join(' | '))}">${cols.map(
            (c) => `<td class="${c.num ? 'num' : ''}${c.key === 'name' ? ' name' : ''}">${c.show(r, unit)}</td>`,
          ).join('')}</tr>`,
      )
      .join('');
    this.scroll.innerHTML = `<table class="data ranked"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
    // Widths through the CSSOM (no inline style attributes: the page runs under a CSP).
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

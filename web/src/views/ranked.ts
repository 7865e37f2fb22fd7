// Ranked event table: rank, name, source, sum, percent, mean, min/max with thread, imbalance.
// Sortable by any column, filterable by name or group; a click selects the event.

import type { EventRow } from '../api/EventRow';
import type { EventsResponse } from '../api/EventsResponse';
import type { Context, View } from '../context';
import { revealIn, showError } from '../context';
import { esc, percent, ratio, value, count, shorten } from '../format';
import { store, touched, type Selection } from '../state';

type Col = { key: string; label: string; num: boolean; get: (r: EventRow) => number | string; show: (r: EventRow, unit: string) => string };

const COLS: Col[] = [
  { key: 'rank', label: '#', num: true, get: (r) => r.rank, show: (r) => String(r.rank) },
  { key: 'name', label: 'Event', num: false, get: (r) => r.name, show: (r) => esc(shorten(r.name, 44)) },
  { key: 'source', label: 'Source', num: false, get: (r) => r.source_file ?? '', show: (r) => esc(r.source_file ? `${r.source_file.split('/').pop()}:${r.source_line}` : '') },
  { key: 'sum', label: 'Sum', num: true, get: (r) => r.stats.total, show: (r, u) => value(r.stats.total, u) },
  { key: 'percent', label: '%', num: true, get: (r) => r.percent, show: (r) => `${percent(r.percent)} <span class="bar" style="width:${Math.min(60, r.percent * 0.6)}px"></span>` },
  { key: 'mean', label: 'Mean', num: true, get: (r) => r.stats.mean, show: (r, u) => value(r.stats.mean, u) },
  { key: 'min', label: 'Min', num: true, get: (r) => r.stats.min, show: (r, u) => `${value(r.stats.min, u)} <small>${esc(r.stats.min_thread ?? '')}</small>` },
  { key: 'max', label: 'Max', num: true, get: (r) => r.stats.max, show: (r, u) => `${value(r.stats.max, u)} <small>${esc(r.stats.max_thread ?? '')}</small>` },
  { key: 'imbalance', label: 'Imbalance', num: true, get: (r) => r.stats.imbalance, show: (r) => ratio(r.stats.imbalance) },
  { key: 'calls', label: 'Calls', num: true, get: (r) => r.calls, show: (r) => count(r.calls) },
];

export class RankedView implements View {
  private data: EventsResponse | null = null;
  private sortKey = 'rank';
  private sortDesc = false;
  private scroll: HTMLDivElement;
  private filter: HTMLInputElement;
  private first = true;

  constructor(private el: HTMLElement, tools: HTMLElement, private ctx: Context) {
    this.scroll = document.createElement('div');
    this.scroll.className = 'scroll';
    el.appendChild(this.scroll);
    this.filter = document.createElement('input');
    this.filter.type = 'search';
    this.filter.placeholder = 'filter name or group';
    this.filter.value = store.get().filter;
    this.filter.addEventListener('input', () => store.set({ filter: this.filter.value }));
    tools.appendChild(this.filter);
  }

  async update(s: Selection, changed: Set<keyof Selection>): Promise<void> {
    if (touched(changed, 'metric', 'kind', 'callpaths')) {
      try {
        this.data = await this.ctx.events(s);
      } catch (e) {
        showError(this.el, e);
        return;
      }
      if (this.first && s.event === null && this.data.rows.length) {
        this.first = false;
        store.set({ event: this.data.rows[0].id });
        return; // the store's notification redraws
      }
      this.first = false;
      this.render(store.get());
    } else if (touched(changed, 'filter', 'event')) {
      this.render(s);
    }
  }

  private render(s: Selection): void {
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
    const head = cols.map((c) => `<th class="${c.num ? 'num' : ''}" data-key="${c.key}">${c.label}${c.key === this.sortKey ? (this.sortDesc ? ' ▼' : ' ▲') : ''}</th>`).join('');
    const body = rows
      .map(
        (r) =>
          `<tr data-id="${r.id}" class="${r.id === s.event ? 'selected' : ''}" title="${esc(r.name)}\n${esc(r.groups.join(' | '))}">${cols.map(
            (c) => `<td class="${c.num ? 'num' : ''}${c.key === 'name' ? ' name' : ''}">${c.show(r, unit)}</td>`,
          ).join('')}</tr>`,
      )
      .join('');
    this.scroll.innerHTML = `<table class="data ranked"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
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

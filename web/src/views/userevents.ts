// User (atomic) events: every user event (message sizes, memory, counters the program sampled)
// with count, min, max, mean and standard deviation over all threads pooled, and the selected
// thread's own numbers beside them; context events name the callpath they were sampled in.
// Sortable by any column, filterable by name. A click on a row draws that user event per thread
// below the table (the statistic chosen) and, for a context event, selects its callpath event
// in every other view; a click on a bar selects the thread.

import type * as echarts from 'echarts';
import type { UserEventDetail } from '../api/UserEventDetail';
import type { UserEventRow } from '../api/UserEventRow';
import type { UserEventStats } from '../api/UserEventStats';
import type { UserEventsResponse } from '../api/UserEventsResponse';
import { api } from '../client';
import { selectFor } from '../controls';
import { count, esc, threadName } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

type Stat = keyof UserEventStats;

/** A number of a user event (no unit: TAU does not record one). */
function num(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(3);
  return v.toLocaleString('en-US', { maximumSignificantDigits: 6 });
}

const COLS: { key: string; label: string; get: (r: UserEventRow) => number | string }[] = [
  { key: 'name', label: 'User event', get: (r) => r.name },
  { key: 'threads', label: 'Threads', get: (r) => r.threads },
  { key: 'count', label: 'Count', get: (r) => r.all.count },
  { key: 'min', label: 'Min', get: (r) => r.all.min },
  { key: 'max', label: 'Max', get: (r) => r.all.max },
  { key: 'mean', label: 'Mean', get: (r) => r.all.mean },
  { key: 'stddev', label: 'Std. dev.', get: (r) => r.all.stddev },
  { key: 'tcount', label: 'Thread: count', get: (r) => r.thread?.count ?? -1 },
  { key: 'tmean', label: 'Thread: mean', get: (r) => r.thread?.mean ?? -1 },
];

/** Every user event as a table, one of them per thread below it. */
export class UserEventsView extends PanelView {
  private table: HTMLDivElement;
  private head: HTMLDivElement;
  private bars: echarts.ECharts;
  private data: UserEventsResponse | null = null;
  private detail: UserEventDetail | null = null;
  private sort = { key: 'count', desc: true };
  private filter = '';

  constructor(panel: Panel) {
    super(panel);
    const search = document.createElement('input');
    search.type = 'search';
    search.placeholder = 'filter user events';
    search.addEventListener('input', () => {
      this.filter = search.value.toLowerCase();
      this.drawTable(this.state());
    });
    this.tools.append(search, selectFor('ustat', { owner: this }));
    this.table = this.div('scroll userevents-table');
    this.head = this.div('note event-title userevents-head');
    const below = document.createElement('div');
    below.className = 'userevents-bars';
    this.body.appendChild(below);
    this.bars = this.chart('userevent-bars', below);
    this.bars.getZr().on('click', (e) => {
      const d = this.detail;
      if (!d || !this.bars.containPixel({ gridIndex: 0 }, [e.offsetX, e.offsetY])) return;
      const at = this.bars.convertFromPixel({ xAxisIndex: 0 }, e.offsetX) as number | number[];
      const i = Math.round(Array.isArray(at) ? at[0] : at);
      const t = d.threads[Math.min(d.threads.length - 1, Math.max(0, i))];
      if (t) store.set({ thread: t.thread });
    });
    this.table.addEventListener('click', (e) => {
      const th = (e.target as HTMLElement).closest('th');
      if (th?.dataset.key) {
        const key = th.dataset.key;
        this.sort = { key, desc: this.sort.key === key ? !this.sort.desc : key !== 'name' };
        this.drawTable(this.state());
        return;
      }
      const tr = (e.target as HTMLElement).closest<HTMLElement>('tr[data-id]');
      if (!tr) return;
      const id = Number(tr.dataset.id);
      const row = this.data?.rows.find((r) => r.id === id);
      store.set(row?.context_event != null ? { uevent: id, event: row.context_event } : { uevent: id });
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'thread', 'sample', 'mode') || !this.data) {
      const d = await this.load((signal) => api.userEvents(s, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      if (this.state().uevent === null && d.rows.length > 0) {
        // The user event with the most values is drawn first.
        const first = [...d.rows].sort((a, b) => b.all.count - a.all.count)[0];
        store.set({ uevent: first.id });
      }
    }
    this.drawTable(this.state());
    if (touched(changed, 'uevent', 'sample', 'mode') || (!this.detail && this.state().uevent !== null)) await this.loadDetail();
    else if (touched(changed, 'ustat', 'thread')) this.drawBars(this.state());
  }

  private async loadDetail(): Promise<void> {
    const s = this.state();
    if (s.uevent === null) {
      this.detail = null;
      this.bars.clear();
      return;
    }
    const id = s.uevent;
    const points = Math.max(64, Math.floor(this.body.getBoundingClientRect().width));
    const d = await this.load((signal) => api.userEvent(s, id, points, signal), 'detail');
    if (d === SUPERSEDED) return;
    this.detail = d;
    this.drawBars(this.state());
  }

  private drawTable(s: State): void {
    const d = this.data;
    if (!d) return;
    if (d.rows.length === 0) {
      this.table.innerHTML = '<p class="note">This run has no user events.</p>';
      return;
    }
    const col = COLS.find((c) => c.key === this.sort.key) ?? COLS[2];
    const rows = d.rows
      .filter((r) => !this.filter || r.name.toLowerCase().includes(this.filter))
      .sort((a, b) => {
        const x = col.get(a);
        const y = col.get(b);
        const c = typeof x === 'string' ? x.localeCompare(String(y)) : x - (y as number);
        return this.sort.desc ? -c : c;
      });
    const cols = d.thread ? COLS : COLS.slice(0, 7);
    const head = cols
      .map((c) => {
        const mark = c.key === this.sort.key ? (this.sort.desc ? ' ▼' : ' ▲') : '';
        const label = c.key.startsWith('t') && c.key !== 'threads' && d.thread ? c.label.replace('Thread', threadName(d.thread)) : c.label;
        return `<th data-key="${c.key}" class="${c.key === 'name' ? '' : 'num'}">${esc(label)}${mark}</th>`;
      })
      .join('');
    const body = rows
      .map((r) => {
        const name = r.base_name
          ? `${esc(r.base_name)}<br><small class="path" title="${esc(r.context_path ?? '')}">in ${esc((r.context_path ?? '').split(' => ').slice(-2).join(' => '))}</small>`
          : esc(r.name);
        const t = r.thread;
        const cells = [
          `<td class="name" title="${esc(r.name)}">${name}</td>`,
          `<td class="num">${count(r.threads)}</td>`,
          `<td class="num">${num(r.all.count)}</td>`,
          `<td class="num">${num(r.all.min)}</td>`,
          `<td class="num">${num(r.all.max)}</td>`,
          `<td class="num">${num(r.all.mean)}</td>`,
          `<td class="num">${num(r.all.stddev)}</td>`,
        ];
        if (d.thread) cells.push(`<td class="num">${t ? num(t.count) : '–'}</td>`, `<td class="num">${t ? num(t.mean) : '–'}</td>`);
        const sel = r.id === s.uevent ? ' selected' : r.context_event !== null && r.context_event === s.event ? ' related' : '';
        return `<tr data-id="${r.id}" class="${sel.trim()}">${cells.join('')}</tr>`;
      })
      .join('');
    this.table.innerHTML = `<table class="data userevents"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }

  private drawBars(s: State): void {
    const d = this.detail;
    if (!d) return;
    const stat = s.ustat as Stat;
    const r = d.row;
    this.head.innerHTML = `<b>${esc(r.name)}</b> per thread: ${esc(stat)} · ${count(r.threads)} threads sampled it, ${num(r.all.count)} values in all${d.downsampled ? ' · every n-th thread shown' : ''}`;
    const sel = s.thread ? d.threads.findIndex((t) => t.thread === s.thread) : -1;
    this.bars.setOption(
      {
        animation: false,
        grid: { left: 70, right: 16, top: 8, bottom: 30 },
        tooltip: {
          trigger: 'axis',
          formatter: (p: unknown) => {
            const i = (p as { dataIndex: number }[])[0].dataIndex;
            const t = d.threads[i];
            if (!t) return '';
            const x = t.stats;
            return `${esc(threadName(t.thread))}<br/>count ${num(x.count)}, mean <b>${num(x.mean)}</b><br/>min ${num(x.min)}, max ${num(x.max)}, σ ${num(x.stddev)}<br/><small>click: select the thread</small>`;
          },
        },
        xAxis: { type: 'category', data: d.threads.map((t) => threadName(t.thread)), name: 'threads', nameLocation: 'middle', nameGap: 16, axisLabel: { show: false } },
        yAxis: { type: 'value', axisLabel: { formatter: (v: number) => num(v), fontSize: 10 } },
        series: [
          {
            type: 'bar',
            data: d.threads.map((t, i) => ({ value: t.stats[stat], itemStyle: { color: i === sel ? '#111' : '#0f766e' } })),
            large: d.threads.length > 2000,
          },
        ],
      },
      true,
    );
  }
}

// Call tree table from callpaths: Name, source location, Inclusive, Exclusive, Calls;
// expandable; for one thread or aggregated over threads (total, mean).

import type { CallTreeResponse } from '../api/CallTreeResponse';
import type { TreeNodeJson } from '../api/TreeNodeJson';
import { api } from '../client';
import { revealIn } from '../context';
import { selectFor } from '../controls';
import { count, esc, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

/** The call tree table, expandable, for all threads or one. */
export class CallTreeView extends PanelView {
  private data: CallTreeResponse | null = null;
  private byId = new Map<number, TreeNodeJson>();
  private open = new Set<number>();
  private scroll: HTMLDivElement;

  constructor(panel: Panel) {
    super(panel);
    this.scroll = this.div('scroll');
    this.tools.appendChild(selectFor('scope', { owner: this }));
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const threadScoped = s.scope === 'thread';
    if (touched(changed, 'metric', 'scope') || (threadScoped && changed.has('thread'))) {
      const d = await this.load((signal) => api.calltree(s, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.byId = new Map(d.nodes.map((n) => [n.id, n]));
      if (this.open.size === 0) for (const n of d.nodes) if (n.depth < 2) this.open.add(n.id);
      const now = this.state();
      this.revealSelected(now);
      this.render(now);
    } else if (touched(changed, 'event')) {
      this.revealSelected(s);
      this.render(s);
    }
  }

  /** Opens the ancestors of every node of the selected event (or of its routine). */
  private revealSelected(s: State): void {
    if (!this.data || s.event === null) return;
    for (const n of this.data.nodes) {
      if (n.id === s.event || n.routine === s.event) {
        let p = n.parent;
        while (p !== null && p !== undefined) {
          this.open.add(p);
          p = this.byId.get(p)?.parent ?? null;
        }
      }
    }
  }

  private render(s: State): void {
    const d = this.data;
    if (!d) return;
    const u = d.unit;
    const rows: string[] = [];
    const visit = (n: TreeNodeJson) => {
      const isOpen = this.open.has(n.id);
      const sel = n.id === s.event || n.routine === s.event;
      const toggle = n.children.length ? `<span class="toggle" data-toggle="${n.id}">${isOpen ? '▾' : '▸'}</span>` : '<span class="toggle"></span>';
      const more = n.omitted_children ? ` <span class="muted">(+${count(n.omitted_children)} smaller)</span>` : '';
      rows.push(
        `<tr data-id="${n.id}" class="${sel ? 'selected' : ''}"><td class="name" data-depth="${n.depth}">${toggle}${esc(n.name)}${more}</td><td>${esc(n.source ?? '')}</td><td class="num">${value(n.inclusive, u)}</td><td class="num">${value(n.exclusive, u)}</td><td class="num">${count(Math.round(n.calls * 100) / 100)}</td><td class="num">${n.threads}</td></tr>`,
      );
      if (isOpen) for (const c of n.children) {
        const child = this.byId.get(c);
        if (child) visit(child);
      }
    };
    for (const n of d.nodes) if (n.parent === null) visit(n);
    const total = d.combine === 'sum' ? 'total' : d.combine === 'not_combinable' ? 'total (not combinable)' : `${d.combine} over threads`;
    const scopeLabel = d.scope === 'total' ? total : d.scope === 'mean' ? d.scope : d.scope === 'mean_all' ? 'mean over all threads' : `thread ${d.scope}`;
    const limited = d.nodes_in_scope > d.nodes.length ? `<div class="note">the ${count(d.nodes.length)} largest of ${count(d.nodes_in_scope)} call-tree nodes (largest inclusive first, with their callers)</div>` : '';
    this.scroll.innerHTML = `${d.has_callpaths ? '' : '<div class="note">no callpaths in this run: flat profile</div>'}${limited}<table class="data calltree"><thead><tr><th>Name</th><th>Source</th><th class="num">Inclusive (${scopeLabel})</th><th class="num">Exclusive</th><th class="num">Calls</th><th class="num">Threads</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    // Indents through the CSSOM (no inline style attributes: the page runs under a CSP).
    this.scroll.querySelectorAll<HTMLElement>('td[data-depth]').forEach((td) => (td.style.paddingLeft = `${6 + Number(td.dataset.depth) * 14}px`));
    this.scroll.querySelectorAll<HTMLElement>('[data-toggle]').forEach((t) =>
      t.addEventListener('click', (e) => {
        e.stopPropagation();
        const id = Number(t.dataset.toggle);
        if (this.open.has(id)) this.open.delete(id);
        else this.open.add(id);
        this.render(store.get());
      }),
    );
    this.scroll.querySelectorAll<HTMLTableRowElement>('tbody tr').forEach((tr) =>
      tr.addEventListener('click', () => store.set({ event: Number(tr.dataset.id) })),
    );
    revealIn(this.scroll, this.scroll.querySelector<HTMLElement>('tr.selected'));
  }
}

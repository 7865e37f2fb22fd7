// Call tree table from callpaths: Name, source location, Inclusive, Exclusive, Calls;
// expandable; for one thread or aggregated over threads (total, mean).

import type { CallTreeResponse } from '../api/CallTreeResponse';
import type { TreeNodeJson } from '../api/TreeNodeJson';
import { api } from '../client';
import type { Context, View } from '../context';
import { revealIn, showError } from '../context';
import { count, esc, value } from '../format';
import { store, touched, type Selection } from '../state';

export class CallTreeView implements View {
  private data: CallTreeResponse | null = null;
  private byId = new Map<number, TreeNodeJson>();
  private open = new Set<number>();
  private scroll: HTMLDivElement;
  private scope: HTMLSelectElement;

  constructor(private el: HTMLElement, tools: HTMLElement, _ctx: Context) {
    this.scroll = document.createElement('div');
    this.scroll.className = 'scroll';
    el.appendChild(this.scroll);
    this.scope = document.createElement('select');
    this.scope.innerHTML = '<option value="total">total over threads</option><option value="mean">mean over threads</option><option value="thread">selected thread</option>';
    this.scope.value = store.get().scope;
    this.scope.addEventListener('change', () => store.set({ scope: this.scope.value as Selection['scope'] }));
    tools.appendChild(this.scope);
  }

  async update(s: Selection, changed: Set<keyof Selection>): Promise<void> {
    const threadScoped = s.scope === 'thread';
    if (touched(changed, 'metric', 'scope') || (threadScoped && changed.has('thread'))) {
      try {
        this.data = await api.calltree(s);
      } catch (e) {
        showError(this.el, e);
        return;
      }
      this.byId = new Map(this.data.nodes.map((n) => [n.id, n]));
      if (this.open.size === 0) for (const n of this.data.nodes) if (n.depth < 2) this.open.add(n.id);
      this.revealSelected(s);
      this.render(s);
    } else if (touched(changed, 'event')) {
      this.revealSelected(s);
      this.render(s);
    }
  }

  /** Opens the ancestors of every node of the selected event (or of its routine). */
  private revealSelected(s: Selection): void {
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

  private render(s: Selection): void {
    const d = this.data;
    if (!d) return;
    const u = d.unit;
    const rows: string[] = [];
    const visit = (n: TreeNodeJson) => {
      const isOpen = this.open.has(n.id);
      const sel = n.id === s.event || n.routine === s.event;
      const toggle = n.children.length ? `<span class="toggle" data-toggle="${n.id}">${isOpen ? '▾' : '▸'}</span>` : '<span class="toggle"></span>';
      rows.push(
        `<tr data-id="${n.id}" class="${sel ? 'selected' : ''}"><td class="name" style="padding-left:${6 + n.depth * 14}px">${toggle}${esc(n.name)}</td><td>${esc(n.source ?? '')}</td><td class="num">${value(n.inclusive, u)}</td><td class="num">${value(n.exclusive, u)}</td><td class="num">${count(Math.round(n.calls * 100) / 100)}</td><td class="num">${n.threads}</td></tr>`,
      );
      if (isOpen) for (const c of n.children) {
        const child = this.byId.get(c);
        if (child) visit(child);
      }
    };
    for (const n of d.nodes) if (n.parent === null) visit(n);
    const scopeLabel = d.scope === 'total' ? 'total' : d.scope === 'mean' ? 'mean' : `thread ${d.scope}`;
    this.scroll.innerHTML = `${d.has_callpaths ? '' : '<div class="note">no callpaths in this run: flat profile</div>'}<table class="data calltree"><thead><tr><th>Name</th><th>Source</th><th class="num">Inclusive (${scopeLabel})</th><th class="num">Exclusive</th><th class="num">Calls</th><th class="num">Threads</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
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

// Call tree table from callpaths: Name, source location, Inclusive, Exclusive, Calls;
// expandable; for one thread or aggregated over threads (total, mean). The name column stays
// in place when the table scrolls right; its width is fitted to the panel, or dragged by the
// grip at its head's right edge (`ctw`); a name's whole callpath shows on hover.

import type { CallTreeResponse } from '../api/CallTreeResponse';
import type { TreeNodeJson } from '../api/TreeNodeJson';
import { api } from '../client';
import { revealIn } from '../context';
import { selectFor } from '../controls';
import { CALLPATH_SEPARATOR, count, esc, pathLabel, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

/** The indent of a name at `depth` (px): 14 px a level, 6 px past the eighth (deep trees
 * keep room for their names). */
function indentOf(depth: number): number {
  return 6 + 14 * Math.min(depth, 8) + 6 * Math.max(0, depth - 8);
}

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
    } else if (touched(changed, 'ctw')) {
      this.sizeName(s);
    }
  }

  protected onResize(): void {
    this.sizeName(this.state());
  }

  /** Sets the width of the name column: the user's (`ctw`), else what the panel leaves
   * beside the other columns. When that cuts the names shown (each beside its indent, up to
   * 180 px of text) by more than a quarter, the column gets their width instead and the table
   * scrolls right (the column stays in place); cut names are whole in their tooltip. 120–600 px. */
  private sizeName(s: State): void {
    const table = this.scroll.querySelector<HTMLElement>('table.calltree');
    const th = table?.querySelector<HTMLElement>('th.name');
    if (!table || !th) return;
    let w = s.ctw;
    if (w === 0) {
      const rest = table.offsetWidth - th.offsetWidth;
      const room = this.scroll.clientWidth - rest - 2;
      // The widest name beside its indent, as laid out (a range over the cell's text).
      let need = 0;
      const range = document.createRange();
      table.querySelectorAll<HTMLElement>('td[data-depth]').forEach((td) => {
        range.selectNodeContents(td);
        const text = range.getBoundingClientRect().width;
        need = Math.max(need, indentOf(Number(td.dataset.depth)) + Math.min(180, text) + 12);
      });
      const fit = room >= 0.75 * need ? room : need;
      w = this.scroll.clientWidth > 0 ? Math.round(Math.min(600, Math.max(120, fit))) : 320;
    }
    table.style.setProperty('--name-w', `${w}px`);
  }

  /** The whole callpath of a node: its callers' names and its own, joined by ` => `. */
  private path(n: TreeNodeJson): string {
    const names = [n.name];
    for (let p = n.parent; p !== null && p !== undefined; p = this.byId.get(p)?.parent ?? null) {
      const up = this.byId.get(p);
      if (!up) break;
      names.push(up.name);
    }
    return names.reverse().join(CALLPATH_SEPARATOR);
  }

  /** The grip at the right edge of the name column's head: dragging it sets the column's
   * width (kept as `ctw` when released); a double click fits it to the panel again. */
  private grip(th: HTMLElement): void {
    const grip = document.createElement('span');
    grip.className = 'col-grip';
    grip.title = 'drag to widen or narrow the names; double click: fit to the panel';
    th.appendChild(grip);
    const table = th.closest('table') as HTMLElement;
    grip.addEventListener('click', (e) => e.stopPropagation());
    grip.addEventListener('dblclick', (e) => {
      e.stopPropagation();
      store.set({ ctw: 0 });
    });
    grip.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      e.stopPropagation();
      grip.setPointerCapture(e.pointerId);
      grip.classList.add('dragging');
      const x0 = e.clientX;
      const w0 = th.getBoundingClientRect().width;
      let w = w0;
      const move = (ev: PointerEvent) => {
        w = Math.round(Math.max(80, Math.min(4000, w0 + ev.clientX - x0)));
        table.style.setProperty('--name-w', `${w}px`);
      };
      const up = () => {
        grip.removeEventListener('pointermove', move);
        grip.removeEventListener('pointerup', up);
        grip.removeEventListener('pointercancel', up);
        grip.classList.remove('dragging');
        if (w !== Math.round(w0)) store.set({ ctw: w });
      };
      grip.addEventListener('pointermove', move);
      grip.addEventListener('pointerup', up);
      grip.addEventListener('pointercancel', up);
    });
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
    // No source column when no node has a source location.
    const hasSource = d.nodes.some((n) => n.source);
    const visit = (n: TreeNodeJson) => {
      const isOpen = this.open.has(n.id);
      const sel = n.id === s.event || n.routine === s.event;
      const toggle = n.children.length ? `<span class="toggle" data-toggle="${n.id}">${isOpen ? '▾' : '▸'}</span>` : '<span class="toggle"></span>';
      const more = n.omitted_children ? ` <span class="muted">(+${count(n.omitted_children)} smaller)</span>` : '';
      rows.push(
        `<tr data-id="${n.id}" class="${sel ? 'selected' : ''}"><td class="name" data-depth="${n.depth}" title="${esc(this.path(n))}">${toggle}${esc(n.name.includes(CALLPATH_SEPARATOR) ? pathLabel(n.name, 60) : n.name)}${more}</td>${hasSource ? `<td>${esc(n.source ?? '')}</td>` : ''}<td class="num">${value(n.inclusive, u)}</td><td class="num">${value(n.exclusive, u)}</td><td class="num">${count(Math.round(n.calls * 100) / 100)}</td><td class="num">${n.threads}</td></tr>`,
      );
      if (isOpen) for (const c of n.children) {
        const child = this.byId.get(c);
        if (child) visit(child);
      }
    };
    for (const n of d.nodes) if (n.parent === null) visit(n);
    const total = d.combine === 'sum' ? 'total' : d.combine === 'not_combinable' ? 'total (not combinable)' : `${d.combine} over threads`;
    const scopeLabel = d.scope === 'total' ? total : d.scope === 'mean' ? d.scope : d.scope === 'mean_all' ? 'mean over all threads' : threadName(d.scope);
    const limited = d.nodes_in_scope > d.nodes.length ? `<div class="note">the ${count(d.nodes.length)} largest of ${count(d.nodes_in_scope)} call-tree nodes (largest inclusive first, with their callers)</div>` : '';
    this.scroll.innerHTML = `${d.has_callpaths ? '' : '<div class="note">no callpaths in this run: flat profile</div>'}${limited}<table class="data calltree"><thead><tr><th class="name">Name</th>${hasSource ? '<th>Source</th>' : ''}<th class="num">Inclusive (${scopeLabel})</th><th class="num">Exclusive</th><th class="num">Calls</th><th class="num">Threads</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    this.sizeName(s);
    const nameTh = this.scroll.querySelector<HTMLElement>('th.name');
    if (nameTh) this.grip(nameTh);
    // Indents through the CSSOM (no inline style attributes: the page runs under a CSP).
    this.scroll.querySelectorAll<HTMLElement>('td[data-depth]').forEach((td) => (td.style.paddingLeft = `${indentOf(Number(td.dataset.depth))}px`));
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

// The call trees of runs A and B as one (the compare panel's "call tree" mode): each calling
// context with its inclusive value in A and B, B − A inclusive (with a diverging bar) and
// exclusive, and whether it is new or gone; opened along the regression path (from the root
// that grew most, into the callee that grew most while it holds at least half the increase).

import type { DiffTreeResponse } from '../api/DiffTreeResponse';
import { esc, shorten, signed, value } from '../format';

/** The nodes to open first: the regression path; when nothing grew, the path of the largest
 * change either way (the callee that changed most, while it holds half of its caller's change). */
export function initiallyOpen(t: DiffTreeResponse): Set<number> {
  if (t.regression_path.length) return new Set(t.regression_path);
  const open = new Set<number>();
  let cur: number | undefined = t.roots[0];
  while (cur !== undefined) {
    open.add(cur);
    const here = Math.abs(t.nodes[cur].inclusive[2]);
    const next: number | undefined = t.nodes[cur].children[0];
    cur = next !== undefined && here > 0 && Math.abs(t.nodes[next].inclusive[2]) >= 0.5 * here ? next : undefined;
  }
  return open;
}

/** Draws the tree into `el` (rows of the open nodes' children); `open` says which nodes show
 * their callees, `selected` is run A's selected event. Rows carry `data-node` and, when run A
 * has the context, `data-id` (its event). */
export function renderDiffTree(el: HTMLElement, t: DiffTreeResponse, open: Set<number>, selected: number | null): void {
  const u = t.unit;
  const onPath = new Set(t.regression_path);
  const max = Math.max(0, ...t.nodes.map((n) => Math.abs(n.inclusive[2])));
  const rows: string[] = [];
  const walk = (i: number, depth: number) => {
    const n = t.nodes[i];
    const kids = n.children.length > 0;
    const mark = kids ? (open.has(i) ? '▾' : '▸') : '·';
    const w = max > 0 ? Math.round((40 * Math.abs(n.inclusive[2])) / max) : 0;
    const change = n.change === 'matched' ? '' : ` <b class="${n.change}">${n.change}</b>`;
    rows.push(
      `<tr data-node="${i}" data-id="${n.event_a ?? ''}" class="${n.event_a !== null && n.event_a === selected ? 'selected' : ''}${onPath.has(i) ? ' regression' : ''}" title="${esc(n.name)}">` +
        `<td class="name"><span class="indent" data-d="${depth}"></span><span class="toggle">${mark}</span> ${esc(shorten(n.name, 48))}${change}</td>` +
        `<td class="num">${value(n.inclusive[0], u)}</td><td class="num">${value(n.inclusive[1], u)}</td>` +
        `<td class="num">${signed(n.inclusive[2], u)} <span class="dbar ${n.inclusive[2] >= 0 ? 'up' : 'down'}" data-w="${w}"></span></td>` +
        `<td class="num">${signed(n.exclusive[2], u)}</td></tr>`,
    );
    if (kids && open.has(i)) for (const c of n.children) walk(c, depth + 1);
  };
  for (const r of t.roots) walk(r, 0);
  const cut = t.nodes.length < t.nodes_in_runs ? ` · the ${t.nodes.length.toLocaleString('en-US')} contexts that changed most of ${t.nodes_in_runs.toLocaleString('en-US')}` : '';
  el.innerHTML =
    `<table class="data diff difftree"><thead><tr><th>Calling context${cut}</th><th class="num">A incl.</th><th class="num">B incl.</th><th class="num">B − A incl.</th><th class="num">B − A excl.</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  el.querySelectorAll<HTMLElement>('.dbar[data-w]').forEach((b) => (b.style.width = `${b.dataset.w}px`));
  el.querySelectorAll<HTMLElement>('.indent[data-d]').forEach((s) => (s.style.paddingLeft = `${12 * Number(s.dataset.d)}px`));
}

// The base of every view: the panel (title, tools, maximize button, body), its charts (ECharts
// init, registration for tests, resizing with the panel, disposal), its requests (a newer
// request cancels the one it supersedes, whose answer is never drawn) and the one place that
// shows a panel's loading and errors.

import * as echarts from 'echarts';
import type { FilterInfo } from './api/FilterInfo';
import type { Context, View } from './context';
import { charts } from './context';
import type { Owner } from './controls';
import { type Exportable, exportMenu, tableCsv } from './export';
import { chartThemeName } from './page';
import type { Key, State } from './state';
import { store } from './state';

/** How a panel is declared in the page's layout (main.ts). */
export interface PanelDef {
  /** Panel id: the element `#panel-<id>`, the CSS grid area, the `focus` value, the group of
   * its settings in the schema. */
  id: string;
  title: string;
  /** The view drawn in it. */
  view: new (panel: Panel) => View;
  /** Shown only for runs where this holds (default: always). */
  when?: (ctx: Context) => boolean;
}

/** What `--filter` hid, as a panel's head says it (`short`) and its tooltip (`long`); null for
 * a run not filtered. */
export function filterText(f: FilterInfo | null | undefined): { short: string; long: string } | null {
  if (!f || (f.events_hidden === 0 && f.threads_hidden === 0)) return f ? { short: `--filter ${f.rules} hides nothing`, long: `--filter ${f.rules}: no event or thread hidden` } : null;
  const parts: string[] = [];
  if (f.events_hidden > 0) parts.push(`${f.events_hidden} of ${f.events_before} events`);
  if (f.threads_hidden > 0) parts.push(`${f.threads_hidden} of ${f.threads_before} threads`);
  const what = parts.join(', ');
  return { short: `--filter ${f.rules} hides ${what}`, long: `--filter ${f.rules}: ${what} hidden from every view and table (serve without --filter to see them)` };
}

/** The frame of one view in the page. */
export class Panel {
  readonly section: HTMLElement;
  /** Where the view puts its controls (right of the title). */
  readonly tools: HTMLElement;
  /** Where the view draws. */
  readonly body: HTMLElement;
  private busy: HTMLElement;
  private error: HTMLElement;
  /** What the save menu saves (the view drawn in the panel). */
  exportable: Exportable | null = null;

  constructor(
    readonly id: string,
    readonly title: string,
    readonly ctx: Context,
  ) {
    this.section = document.createElement('section');
    this.section.className = `panel panel-${id}`;
    this.section.id = `panel-${id}`;
    this.section.dataset.view = id;
    const head = document.createElement('div');
    head.className = 'panel-head';
    const h2 = document.createElement('h2');
    h2.textContent = title;
    h2.title = title;
    this.busy = document.createElement('span');
    this.busy.className = 'busy';
    this.busy.textContent = 'loading…';
    this.busy.hidden = true;
    this.tools = document.createElement('div');
    this.tools.className = 'tools';
    const max = document.createElement('button');
    max.className = 'max';
    max.title = 'maximize / restore';
    max.textContent = '⤢';
    max.addEventListener('click', () => store.set({ focus: store.get().focus === id ? null : id }));
    const save = exportMenu(
      () => this.title,
      () => this.exportable,
      (e) => this.showError(e),
    );
    // Tools that do not fit on the head's one line go into a "⋯" menu.
    const more = document.createElement('button');
    more.type = 'button';
    more.className = 'more';
    more.textContent = '⋯';
    more.title = 'settings of this panel';
    more.setAttribute('aria-label', `settings of ${title}`);
    more.setAttribute('aria-expanded', 'false');
    more.addEventListener('click', () => {
      const open = !this.section.classList.contains('tools-open');
      this.section.classList.toggle('tools-open', open);
      more.setAttribute('aria-expanded', String(open));
    });
    head.append(h2, this.busy, more, this.tools, save, max);
    const fit = () => {
      head.classList.add('measuring');
      this.section.classList.remove('crowded');
      const over = head.scrollWidth > head.clientWidth + 1;
      head.classList.remove('measuring');
      this.section.classList.toggle('crowded', over);
      if (!over) {
        this.section.classList.remove('tools-open');
        more.setAttribute('aria-expanded', 'false');
      }
    };
    new ResizeObserver(fit).observe(head);
    new MutationObserver(fit).observe(this.tools, { childList: true, subtree: true });

    this.body = document.createElement('div');
    this.body.className = 'panel-body';
    // A tab stop with the panel's name (keyboard users reach every view); "loading…" in it
    // until the view first drew (`pending`).
    this.body.tabIndex = 0;
    this.body.setAttribute('aria-label', title);
    this.section.classList.add('pending');
    this.error = document.createElement('div');
    this.error.className = 'error panel-error';
    this.error.hidden = true;
    this.section.append(head, this.body, this.error);
    const filtered = filterText(ctx.run.filter);
    if (filtered) {
      // What --filter hid: every view says it under its head, nothing disappears without a word.
      const f = document.createElement('div');
      f.className = 'panel-filter';
      f.textContent = filtered.short;
      f.title = filtered.long;
      head.after(f);
    }
  }

  /** Shows or hides the panel's "loading…" mark. */
  loading(on: boolean): void {
    this.busy.hidden = !on;
    this.section.classList.toggle('loading', on);
  }

  /** Shows an error over the panel's body (null hides it). A view never goes blank silently. */
  showError(err: unknown): void {
    if (err === null) {
      this.error.hidden = true;
      return;
    }
    console.error(err);
    this.error.textContent = err instanceof Error ? err.message : String(err);
    this.error.hidden = false;
  }
}

/** `load` resolves to this when a newer request superseded it (or the view cancelled it). */
export const SUPERSEDED: unique symbol = Symbol('superseded');

/** Shows the loading mark only for requests slower than this (ms). */
const LOADING_DELAY = 150;

/** The base class of every view: `update` is the view's own; the rest is shared. */
export abstract class PanelView implements View, Owner, Exportable {
  protected readonly ctx: Context;
  protected readonly body: HTMLElement;
  protected readonly tools: HTMLElement;
  private charts: [string, echarts.ECharts][] = [];
  private requests = new Map<string, AbortController>();
  private pending = 0;
  private loadingTimer: number | undefined;
  private disposers: (() => void)[] = [];
  private size = '';
  private observer: ResizeObserver;

  constructor(protected readonly panel: Panel) {
    this.ctx = panel.ctx;
    this.body = panel.body;
    this.tools = panel.tools;
    this.observer = new ResizeObserver(() => this.observed());
    this.observer.observe(this.body);
    // The "loading…" placeholder goes when the view shows something: text, or a chart with
    // data drawn.
    const shown = new MutationObserver(() => {
      if (this.body.textContent?.trim()) this.drew();
    });
    shown.observe(this.body, { childList: true, subtree: true, characterData: true });
    this.own(() => shown.disconnect());
    this.size = this.sizeKey();
    panel.exportable = this;
  }

  /** The charts shown now (the save menu's PNG and SVG). */
  exportCharts(): echarts.ECharts[] {
    return this.charts.map(([, c]) => c).filter((c) => !c.isDisposed() && c.getDom().offsetWidth > 0 && c.getDom().offsetHeight > 0);
  }

  /** The panel's rows as CSV (the save menu's CSV): by default its HTML table, if any. */
  csv(): string | null {
    return tableCsv(this.body);
  }

  /** Redraws what `changed` keys affect (each view's own). */
  abstract update(s: State, changed: Set<Key>): void | Promise<void>;

  /** A chart in a new `.chart` element appended to `parent` (default: the body), registered as
   * `window.perfscape.charts.get(name)`, resized with the panel, disposed with the view;
   * `devicePixelRatio` (default the screen's) draws finer: the 3-D views' text is a texture. */
  protected chart(name: string, parent: HTMLElement = this.body, style: Partial<CSSStyleDeclaration> = {}, devicePixelRatio?: number): echarts.ECharts {
    const div = document.createElement('div');
    div.className = 'chart';
    Object.assign(div.style, style);
    parent.appendChild(div);
    const c = echarts.init(div, chartThemeName(), devicePixelRatio ? { devicePixelRatio: Math.max(devicePixelRatio, window.devicePixelRatio || 1) } : undefined);
    c.on('finished', () => {
      const series = (c.getOption() as { series?: unknown[] } | undefined)?.series;
      if (series?.length) this.drew();
    });
    this.charts.push([name, c]);
    charts.set(name, c);
    return c;
  }

  /** A `<div>` appended to the body: by default a line of text at its top (a chart below it
   * then starts at `top: 26px`). */
  protected div(className = 'note event-title'): HTMLDivElement {
    const div = document.createElement('div');
    div.className = className;
    this.body.appendChild(div);
    return div;
  }

  /** Runs a request of `slot` (one per kind of answer the view draws). A newer request of the
   * same slot aborts this one: it then resolves to `SUPERSEDED`, even if its answer already
   * arrived, so a late answer is never drawn over a newer one. Errors are shown in the panel
   * (and resolve to `SUPERSEDED` too); a successful answer clears the error. */
  protected async load<T>(request: (signal: AbortSignal) => Promise<T>, slot = 'main'): Promise<T | typeof SUPERSEDED> {
    this.requests.get(slot)?.abort();
    const ctl = new AbortController();
    this.requests.set(slot, ctl);
    this.busy(+1);
    try {
      const v = await request(ctl.signal);
      if (ctl.signal.aborted) return SUPERSEDED;
      this.panel.showError(null);
      return v;
    } catch (e) {
      if (ctl.signal.aborted) return SUPERSEDED;
      this.panel.showError(e);
      return SUPERSEDED;
    } finally {
      if (this.requests.get(slot) === ctl) this.requests.delete(slot);
      this.busy(-1);
    }
  }

  /** Cancels the pending request of `slot` (its answer will not be drawn). */
  protected cancel(slot = 'main'): void {
    this.requests.get(slot)?.abort();
    this.requests.delete(slot);
  }

  /** The state now (after an `await`, the state may have moved on). */
  protected state(): State {
    return store.get();
  }

  /** The view drew for the first time: its placeholder goes. */
  private drew(): void {
    this.panel.section.classList.remove('pending');
  }

  private busy(d: number): void {
    this.pending += d;
    clearTimeout(this.loadingTimer);
    if (this.pending > 0) this.loadingTimer = window.setTimeout(() => this.panel.loading(this.pending > 0), LOADING_DELAY);
    else this.panel.loading(false);
  }

  private sizeKey(): string {
    const r = this.body.getBoundingClientRect();
    return `${Math.round(r.width)}x${Math.round(r.height)}`;
  }

  private observed(): void {
    const key = this.sizeKey();
    if (key === this.size || key.startsWith('0x') || key.endsWith('x0')) return;
    this.size = key;
    this.resize();
  }

  /** The panel changed size: resizes the charts, then `onResize`. */
  resize(): void {
    for (const [, c] of this.charts) c.resize();
    this.onResize();
  }

  /** A view whose answer depends on its size asks again here (default: nothing). */
  protected onResize(): void {}

  /** Frees `dispose` with the view. */
  own(dispose: () => void): void {
    this.disposers.push(dispose);
  }

  /** Aborts pending requests, disposes the charts, stops listening, and takes the panel off
   * the page. */
  dispose(): void {
    for (const ctl of this.requests.values()) ctl.abort();
    this.requests.clear();
    this.observer.disconnect();
    clearTimeout(this.loadingTimer);
    for (const [name, c] of this.charts) {
      if (charts.get(name) === c) charts.delete(name);
      c.dispose();
    }
    this.charts = [];
    for (const d of this.disposers.splice(0)) d();
    this.panel.section.remove();
  }
}

// The page around the views: what it says while a run loads, its help, its light and dark
// themes (CSS variables of style.css, and the charts' colours taken from them) and its
// keyboard (Escape leaves a maximized panel, ↑/↓ step through the ranked table).

import * as echarts from 'echarts';
import { charts } from './context';
import { esc } from './format';
import { type State, store } from './state';

// ---------------------------------------------------------------------------------------------
// Loading

/** The message shown in place of the page until its header and panels are there: names the
 * run and what is being fetched. */
export class LoadingScreen {
  private el: HTMLElement;
  private what: HTMLElement;

  constructor(app: HTMLElement) {
    // index.html shows it while the script loads; made here when it is not there (a report).
    const shown = document.getElementById('page-loading');
    if (shown?.querySelector('.page-loading-what')) this.el = shown;
    else {
      shown?.remove();
      this.el = document.createElement('div');
      this.el.className = 'page-loading';
      this.el.id = 'page-loading';
      this.el.setAttribute('role', 'status');
      this.el.innerHTML = '<h1>perfscape</h1><p class="page-loading-run"></p><p class="page-loading-what"></p><div class="page-loading-bar"></div>';
      app.appendChild(this.el);
    }
    this.what = this.el.querySelector('.page-loading-what') as HTMLElement;
    this.say(null, 'asking the server what it loaded (run information, /api/run)…');
  }

  /** Says which run (`run`: its path and size, when known) and what is fetched now. */
  say(run: string | null, what: string): void {
    const r = this.el.querySelector('.page-loading-run') as HTMLElement;
    r.innerHTML = run ? `Loading <code>${esc(run)}</code>` : 'Loading the run';
    this.what.textContent = what;
  }

  /** The page is there. */
  done(): void {
    this.watch?.disconnect();
    this.el.remove();
  }

  private watch: MutationObserver | null = null;

  /** Done as soon as `root` holds an element matching `selector` (the first panel). */
  doneWhen(root: HTMLElement, selector: string): void {
    if (root.querySelector(selector)) return this.done();
    this.watch = new MutationObserver(() => {
      if (root.querySelector(selector)) this.done();
    });
    this.watch.observe(root, { childList: true, subtree: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Themes

/** The theme in force: the chosen one, or the system's (no choice: `theme` null). */
export function effectiveTheme(s: State = store.get()): 'light' | 'dark' {
  if (s.theme === 'light' || s.theme === 'dark') return s.theme;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

const STORAGE_KEY = 'perfscape.theme';

/** The ECharts theme of the page's colours (from the CSS variables in force). */
function chartTheme(): object {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  const ink = v('--ink');
  const muted = v('--muted');
  const line = v('--line');
  const panel = v('--panel');
  const axis = {
    axisLine: { lineStyle: { color: muted } },
    axisTick: { lineStyle: { color: muted } },
    axisLabel: { color: ink },
    splitLine: { lineStyle: { color: line } },
    nameTextStyle: { color: ink },
  };
  // 3D charts (echarts-gl): the grid3D's axes and each 3D axis type.
  const axis3D = {
    axisLine: { lineStyle: { color: muted } },
    axisLabel: { textStyle: { color: ink } },
    nameTextStyle: { color: ink },
    splitLine: { lineStyle: { color: [line] } },
  };
  return {
    grid3D: axis3D,
    valueAxis3D: axis3D,
    categoryAxis3D: axis3D,
    logAxis3D: axis3D,
    timeAxis3D: axis3D,
    backgroundColor: panel,
    textStyle: { color: ink },
    title: { textStyle: { color: ink }, subtextStyle: { color: muted } },
    legend: { textStyle: { color: ink } },
    categoryAxis: axis,
    valueAxis: axis,
    logAxis: axis,
    timeAxis: axis,
    visualMap: { textStyle: { color: ink } },
    tooltip: { backgroundColor: panel, borderColor: line, textStyle: { color: ink } },
    dataZoom: { textStyle: { color: ink }, borderColor: line },
  };
}

/** The name of the ECharts theme new charts are made with (`echarts.init(div, name)`). */
export function chartThemeName(): string {
  return `perfscape-${effectiveTheme()}`;
}

/** Applies the theme in force: `data-theme` on the root (the CSS variables follow), the
 * charts' theme (registered from those variables; every chart shown takes it). */
function applyTheme(): void {
  const t = effectiveTheme();
  document.documentElement.dataset.theme = t;
  echarts.registerTheme(`perfscape-${t}`, chartTheme());
  for (const c of charts.values()) {
    const chart = c as echarts.ECharts;
    if (chart && typeof chart.setTheme === 'function' && !chart.isDisposed()) chart.setTheme(`perfscape-${t}`);
  }
}

/** Follows the `theme` key (URL, a choice kept in localStorage when the URL has none, the
 * system's preference for `auto`). Call before any chart is made. */
export function initTheme(): void {
  const inUrl = new URLSearchParams(window.location.search).has('theme');
  const kept = (() => {
    try {
      return window.localStorage.getItem(STORAGE_KEY);
    } catch {
      return null;
    }
  })();
  if (!inUrl && (kept === 'light' || kept === 'dark')) store.set({ theme: kept });
  applyTheme();
  window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => {
    if (store.get().theme === null) applyTheme();
  });
  store.subscribe((s, changed) => {
    if (!changed.has('theme')) return;
    try {
      if (s.theme === null) window.localStorage.removeItem(STORAGE_KEY);
      else window.localStorage.setItem(STORAGE_KEY, s.theme);
    } catch {
      // No storage (a report from file://, private mode): the URL keeps it.
    }
    applyTheme();
  });
}

/** The header's theme button: switches between light and dark. */
function themeButton(): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'page-button theme-toggle';
  b.id = 'theme-toggle';
  const sync = () => {
    const dark = effectiveTheme() === 'dark';
    b.textContent = dark ? '☀' : '☾';
    b.title = dark ? 'dark theme (click for light)' : 'light theme (click for dark)';
    b.setAttribute('aria-label', dark ? 'switch to the light theme' : 'switch to the dark theme');
    b.setAttribute('aria-pressed', String(dark));
  };
  b.addEventListener('click', () => store.set({ theme: effectiveTheme() === 'dark' ? 'light' : 'dark' }));
  store.subscribe((_s, changed) => {
    if (changed.has('theme')) sync();
  });
  sync();
  return b;
}

// ---------------------------------------------------------------------------------------------
// Help

const HELP = `
<div class="help-head"><h2 id="help-title">perfscape: how to read the page</h2><button type="button" class="page-button help-close" aria-label="close the help">✕</button></div>
<div class="help-body">
<section><h3>Views</h3><p>Every view follows one selection: an <b>event</b> (a timer: a routine or a call path)
and a <b>thread</b> (<code>node.context.thread</code>; a rank's first thread is <code>rank.0.0</code>). Click a row,
a cell or a bar to select; the header says what is selected, the URL keeps it (Back goes to the previous one).</p>
<dl>
<dt>Ranked events</dt><dd>every event of the metric, largest first; sort by a column, filter by name or group.</dd>
<dt>Heat map</dt><dd>events × threads, one cell per event and thread; drag or use the zoom to see a region.</dd>
<dt>Overview</dt><dd>the whole run reduced to the panel's size; its rectangle is the heat map's region.</dd>
<dt>Event across threads</dt><dd>the selected event on every thread (sorted bars with min and max) and its histogram.</dd>
<dt>Call tree</dt><dd>inclusive and exclusive values per call path.</dd>
<dt>3D terrain, Kiviat, point cloud</dt><dd>threads × events as a surface, over samples as a tube, or as points in three events.</dd>
<dt>Over time, sample bar</dt><dd>runs observed over time (snapshots, live runs): the selected event per sample; the slider picks the sample.</dd>
</dl></section>
<section><h3>Blank cells and skip marks</h3>
<p><span class="help-swatch help-blank"></span><b>A blank cell</b> (no colour) means the event is <b>absent on that thread</b>: the thread never entered it.
That is not a zero: a thread that entered it and spent no time is coloured at the bottom of the scale.</p>
<p><span class="help-swatch help-skip"></span><b>A dashed line in the overview</b> marks rows skipped there: a run of more than
<i>skip&nbsp;&gt;</i> rows in a row that are empty on every thread shown; the tooltip of the row below says how many.</p></section>
<section><h3>Colour scale</h3><p><span class="help-scale"></span> low → high value. In the heat map, <i>colour per event</i>
scales each row from 0 to its own maximum (a row's hottest cell is that event's maximum, not the run's); <i>colour per run</i>
uses one scale, from the smallest to the largest cell of the run. The legend beside the map shows the scale in force.</p></section>
<section><h3>Keyboard</h3><dl class="help-keys">
<dt><kbd>Tab</kbd> / <kbd>Shift</kbd>+<kbd>Tab</kbd></dt><dd>move through the controls, panel by panel, and into each panel's view.</dd>
<dt><kbd>↑</kbd> / <kbd>↓</kbd></dt><dd>in the ranked table (when it has the focus): the previous / next event; <kbd>Home</kbd> / <kbd>End</kbd>: the first / last.</dd>
<dt><kbd>Enter</kbd> / <kbd>Space</kbd></dt><dd>press the focused button (⤢ maximizes a panel, ⤓ saves it).</dd>
<dt><kbd>Esc</kbd></dt><dd>closes this help or a menu; else restores a maximized panel.</dd>
<dt><kbd>?</kbd></dt><dd>opens this help.</dd>
</dl></section>
</div>`;

/** The help dialog and the header's "?" button that opens it. */
function helpButton(): HTMLElement {
  const dialog = document.createElement('dialog');
  dialog.className = 'help';
  dialog.id = 'help';
  dialog.setAttribute('aria-labelledby', 'help-title');
  dialog.innerHTML = HELP;
  dialog.querySelector('.help-close')?.addEventListener('click', () => dialog.close());
  // A click on the backdrop (outside the dialog's box) closes it.
  dialog.addEventListener('click', (e) => {
    if (e.target === dialog) dialog.close();
  });
  document.body.appendChild(dialog);
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'page-button help-button';
  b.id = 'help-button';
  b.textContent = '?';
  b.title = 'help: the views, blank cells, skip marks, colours, keys';
  b.setAttribute('aria-label', 'help');
  b.addEventListener('click', () => dialog.showModal());
  return b;
}

/** The header's own buttons: help and theme. */
export function pageTools(): HTMLElement {
  const span = document.createElement('span');
  span.className = 'page-tools';
  span.append(themeButton(), helpButton());
  return span;
}

// ---------------------------------------------------------------------------------------------
// Keyboard

/** True when keys typed into `el` are its own (text fields, selects). */
function typing(el: Element | null): boolean {
  return !!el && (el.matches('input, textarea, select, [contenteditable="true"]') || !!el.closest('dialog[open]'));
}

/** The page's keys: Escape restores a maximized panel; ↑/↓/Home/End step through the ranked
 * table when it has the focus; `?` opens the help. Every panel body is a tab stop. */
export function initKeyboard(): void {
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target as Element | null;
    if (e.key === 'Escape') {
      if (document.querySelector('dialog[open]') || document.querySelector('.export-menu:not([hidden])')) return;
      const menu = document.querySelector('.panel.tools-open');
      if (menu) {
        menu.classList.remove('tools-open');
        menu.querySelector('button.more')?.setAttribute('aria-expanded', 'false');
        e.preventDefault();
        return;
      }
      if (store.get().focus !== null) {
        store.set({ focus: null });
        e.preventDefault();
      }
      return;
    }
    if (e.key === '?' && !typing(target)) {
      (document.getElementById('help') as HTMLDialogElement | null)?.showModal();
      e.preventDefault();
      return;
    }
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key) || typing(target)) return;
    const panel = target?.closest('#panel-ranked');
    if (!panel) return;
    const rows = [...panel.querySelectorAll<HTMLElement>('tbody tr[data-id]')];
    if (rows.length === 0) return;
    const at = rows.findIndex((r) => r.classList.contains('selected'));
    const next = e.key === 'Home' ? 0 : e.key === 'End' ? rows.length - 1 : at < 0 ? 0 : Math.max(0, Math.min(rows.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)));
    e.preventDefault();
    if (next !== at) store.set({ event: Number(rows[next].dataset.id) });
  });
}

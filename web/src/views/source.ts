// Source (seed 000 §2.1.2–2.2.1): a source file of the run, syntax-highlighted (highlight.js,
// C, C++, Fortran and Python only), with a heat gutter per line (the sum, mean or max across
// threads, or the selected thread's value), the line statistics of the line under the pointer
// or selected (sum, mean, min and max with their threads, standard deviation), the routine
// ranges, and the seed's line overview beside it (empty runs of lines skipped), linked both
// ways: a click in the strip scrolls the text, the strip frames the lines in sight. A click on
// a line selects its event in every other panel; selecting a sampled line's event elsewhere
// scrolls to it. A file the server cannot read is named with the reason, and the sampled lines
// are listed without text. With `serve --binary PATH`, the instructions of the selected line
// (the seed's assembler window) are listed under its statistics.

import hljs from 'highlight.js/lib/core';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import fortran from 'highlight.js/lib/languages/fortran';
import python from 'highlight.js/lib/languages/python';
import type { LineJson } from '../api/LineJson';
import type { SourceResponse } from '../api/SourceResponse';
import { api } from '../client';
import { selectFor } from '../controls';
import { esc, threadName, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';
import { HOT } from './colourscale';

hljs.registerLanguage('c', c);
hljs.registerLanguage('cpp', cpp);
hljs.registerLanguage('fortran', fortran);
hljs.registerLanguage('python', python);

/** The highlight.js language of a file name, or null (shown plain). */
export function languageOf(file: string): string | null {
  const ext = file.toLowerCase().split('.').pop() ?? '';
  if (file.endsWith('.C')) return 'cpp';
  if (['c', 'h'].includes(ext)) return 'c';
  if (['cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'cu'].includes(ext)) return 'cpp';
  if (['f', 'f77', 'f90', 'f95', 'f03', 'f08', 'for', 'ftn'].includes(ext)) return 'fortran';
  if (ext === 'py') return 'python';
  return null;
}

/** Highlighted HTML of `text`, one string per line: spans that cross a line break are closed at
 * its end and opened again on the next line. */
export function highlightLines(text: string, lang: string | null): string[] {
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  if (!lang) return lines.map(esc);
  const html = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
  const out: string[] = [];
  const open: string[] = [];
  for (const line of html.split('\n')) {
    const prefix = open.join('');
    for (const m of line.matchAll(/<span[^>]*>|<\/span>/g)) {
      if (m[0] === '</span>') open.pop();
      else open.push(m[0]);
    }
    out.push(prefix + line + '</span>'.repeat(open.length));
  }
  if (text.endsWith('\n')) out.pop();
  return out;
}

/** The colour of `v` on the heat scale over `[0, max]`. */
function heatColour(v: number, max: number): string {
  const x = max > 0 ? Math.max(0, Math.min(1, v / max)) : 0;
  return HOT[Math.min(HOT.length - 1, Math.round(x * (HOT.length - 1)))];
}

/** A source file with its line heat, statistics and overview. */
export class SourceView extends PanelView {
  private data: SourceResponse | null = null;
  private head: HTMLDivElement;
  private fileSel: HTMLSelectElement;
  private main: HTMLDivElement;
  private scroll: HTMLDivElement;
  private strip: HTMLDivElement;
  private stats: HTMLDivElement;
  private byLine = new Map<number, LineJson>();
  private selected: number | null = null;
  private asm: HTMLDivElement;
  private asmRequest: AbortController | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.fileSel = document.createElement('select');
    this.fileSel.className = 'source-file';
    // The files come from the answer: a select of the `sfile` key whose options are the run's.
    this.fileSel.dataset.key = 'sfile';
    this.fileSel.dataset.dynamic = '1';
    this.fileSel.title = 'the source file shown (largest total first)';
    this.fileSel.addEventListener('change', () => store.set({ sfile: this.fileSel.value }));
    this.tools.append(this.fileSel, selectFor('heat', { owner: this }));
    this.head = this.div('note source-head');
    this.main = this.div('source-main');
    this.scroll = document.createElement('div');
    this.scroll.className = 'source-scroll';
    this.strip = document.createElement('div');
    this.strip.className = 'source-strip';
    this.strip.title = 'line overview: empty runs of lines skipped; click to scroll there';
    this.stats = document.createElement('div');
    this.stats.className = 'source-stats';
    this.asm = document.createElement('div');
    this.asm.className = 'source-asm';
    const side = document.createElement('div');
    side.className = 'source-side';
    side.append(this.stats, this.asm);
    this.main.append(this.scroll, this.strip, side);
    this.scroll.addEventListener('scroll', () => this.frame());
    this.scroll.addEventListener('mouseover', (e) => {
      const tr = (e.target as HTMLElement).closest<HTMLElement>('tr[data-line]');
      if (tr) this.showStats(Number(tr.dataset.line));
    });
    this.scroll.addEventListener('mouseleave', () => this.showStats(this.selected));
    this.scroll.addEventListener('click', (e) => {
      const tr = (e.target as HTMLElement).closest<HTMLElement>('tr[data-line]');
      if (!tr) return;
      const line = Number(tr.dataset.line);
      this.select(line, false);
      const l = this.byLine.get(line);
      if (l && l.events.length) store.set({ event: l.events[0] });
    });
    this.strip.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('[data-first]');
      if (b) this.scrollTo(Number(b.dataset.first), true);
    });
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    const inData = s.event !== null && this.lineOf(s.event) !== null;
    const again = touched(changed, 'metric', 'kind', 'sample', 'mode', 'heat', 'sfile') || (s.heat === 'thread' && touched(changed, 'thread')) || (touched(changed, 'event') && !inData && s.sfile === '');
    if (again || !this.data) {
      const thread = s.heat === 'thread' ? s.thread : null;
      const d = await this.load((signal) => api.source(s, s.heat === 'thread' && thread === null ? 'sum' : s.heat, thread, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
      this.draw(this.state());
    }
    const now = this.state();
    const line = now.event === null ? null : this.lineOf(now.event);
    if (line !== null && line !== this.selected) this.select(line, true);
  }

  /** The line holding event `e`, if the file shown has it. */
  private lineOf(e: number): number | null {
    for (const l of this.byLine.values()) if (l.events.includes(e)) return l.line;
    return null;
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    this.byLine = new Map(d.lines.map((l) => [l.line, l]));
    this.fileSel.innerHTML = '';
    for (const f of d.files) this.fileSel.add(new Option(`${f.name.split('/').pop()} (${f.lines} lines${f.total !== null ? `, ${value(f.total, d.unit)}` : ''})`, f.name));
    this.fileSel.value = d.file ?? '';
    this.fileSel.hidden = d.files.length === 0;
    const what = d.heat === 'thread' ? `thread ${threadName(d.thread)}` : `${d.heat} over threads`;
    const waiting = s.heat === 'thread' && s.thread === null ? ' (select a thread to see its values)' : '';
    this.head.innerHTML = d.file === null
      ? esc(d.note ?? 'no source lines')
      : `<b title="${esc(d.file)}">${esc(d.file)}</b> · heat: ${esc(d.metric)} ${esc(what)}${waiting}, ${d.max === null ? `no sampled lines${d.routines.length ? `, ${d.routines.length} routines marked in the gutter` : ''}` : `top ${value(d.max, d.unit)}`}${d.path ? ` · <small title="read from">${esc(d.path)}</small>` : ''}`;
    const max = d.max ?? 0;
    const routineAt = (n: number) => d.routines.filter((r) => r.start <= n && n <= r.end);
    let rows: string[] = [];
    if (d.text !== null) {
      const html = highlightLines(d.text, d.file ? languageOf(d.file) : null);
      rows = html.map((h, i) => this.row(i + 1, h, max, routineAt(i + 1), d.unit));
    } else if (d.file !== null) {
      rows = d.lines.map((l) => this.row(l.line, '', max, routineAt(l.line), d.unit));
    }
    const missing = d.file !== null && d.text === null ? `<div class="source-missing" role="status">The text of this file is not shown: ${esc(d.note ?? '')}. The sampled lines are listed with their values.</div>` : '';
    this.scroll.innerHTML = `${missing}<table class="source"><tbody>${rows.join('')}</tbody></table>`;
    this.drawStrip(max);
    this.selected = null;
    const line = s.event === null ? null : this.lineOf(s.event);
    if (line !== null) this.select(line, true);
    else this.showStats(null);
    this.frame();
  }

  private row(n: number, html: string, max: number, routines: { name: string; start: number; end: number }[], unit: string): string {
    const l = this.byLine.get(n);
    const heat = l?.heat ?? null;
    const style = heat !== null ? ` style="background:${heatColour(heat, max)};color:${heat / (max || 1) > 0.35 && heat / (max || 1) < 0.65 ? '#111' : '#fff'}"` : '';
    const rt = routines.length ? `<td class="rt${routines.some((r) => r.start === n) ? ' start' : ''}${routines.some((r) => r.end === n) ? ' end' : ''}" title="${esc(routines.map((r) => `${r.name} (lines ${r.start}–${r.end})`).join('\n'))}"></td>` : '<td class="rt none"></td>';
    return `<tr data-line="${n}"${l ? ' class="sampled"' : ''}><td class="heat"${style}>${heat !== null ? esc(value(heat, unit)) : ''}</td>${rt}<td class="ln">${n}</td><td class="code"><code>${html}</code></td></tr>`;
  }

  /** The seed's overview strip: one block per bin, skipped runs as gaps. */
  private drawStrip(max: number): void {
    const d = this.data;
    if (!d) return;
    const blocks = d.overview
      .map((b) => {
        const gap = b.skipped_before > 0 ? `<div class="gap" title="${b.skipped_before} lines without values skipped"></div>` : '';
        const bg = b.value !== null ? heatColour(b.value, max) : 'transparent';
        const title = `${b.first === b.last ? `line ${b.first}` : `lines ${b.first}–${b.last}`}${b.value !== null ? `: ${value(b.value, d.unit)}` : ''}`;
        return `${gap}<div class="bin" data-first="${b.first}" data-last="${b.last}" style="background:${bg}" title="${esc(title)}"></div>`;
      })
      .join('');
    this.strip.innerHTML = `${blocks}<div class="frame"></div>`;
  }

  /** Frames in the strip the bins of the lines in sight. */
  private frame(): void {
    const f = this.strip.querySelector<HTMLElement>('.frame');
    const rows = this.scroll.querySelectorAll<HTMLElement>('tr[data-line]');
    if (!f || rows.length === 0) return;
    const top = this.scroll.scrollTop;
    const bottom = top + this.scroll.clientHeight;
    let first = Infinity;
    let last = -Infinity;
    for (const r of rows) {
      if (r.offsetTop + r.offsetHeight > top && r.offsetTop < bottom) {
        const n = Number(r.dataset.line);
        first = Math.min(first, n);
        last = Math.max(last, n);
      }
    }
    const bins = [...this.strip.querySelectorAll<HTMLElement>('.bin')].filter((b) => Number(b.dataset.last) >= first && Number(b.dataset.first) <= last);
    this.strip.querySelectorAll('.bin.selected').forEach((b) => b.classList.remove('selected'));
    if (this.selected !== null) {
      for (const b of this.strip.querySelectorAll<HTMLElement>('.bin')) if (Number(b.dataset.first) <= this.selected && this.selected <= Number(b.dataset.last)) b.classList.add('selected');
    }
    if (bins.length === 0) {
      f.hidden = true;
      return;
    }
    f.hidden = false;
    const a = bins[0];
    const b = bins[bins.length - 1];
    f.style.top = `${a.offsetTop}px`;
    f.style.height = `${b.offsetTop + b.offsetHeight - a.offsetTop}px`;
  }

  private scrollTo(line: number, centre: boolean): void {
    const tr = this.scroll.querySelector<HTMLElement>(`tr[data-line="${line}"]`);
    if (!tr) return;
    if (centre) this.scroll.scrollTop = Math.max(0, tr.offsetTop - this.scroll.clientHeight / 2);
    this.frame();
  }

  private select(line: number, scroll: boolean): void {
    this.scroll.querySelectorAll('tr.selected').forEach((r) => r.classList.remove('selected'));
    this.scroll.querySelector(`tr[data-line="${line}"]`)?.classList.add('selected');
    this.selected = line;
    if (scroll) this.scrollTo(line, true);
    this.showStats(line);
    this.frame();
    void this.showAsm(line);
  }

  /** The instructions of `line` in the served executable (or why there are none). */
  private async showAsm(line: number): Promise<void> {
    const d = this.data;
    if (!d || d.file === null) return;
    if (!d.disasm) {
      this.asm.innerHTML = '<p class="note">Start the server with <code>--binary PATH</code> (the program, built with -g) to see the instructions of a line.</p>';
      return;
    }
    this.asmRequest?.abort();
    const ctl = new AbortController();
    this.asmRequest = ctl;
    try {
      const a = await api.disasm(this.state(), d.file, line, line, ctl.signal);
      if (ctl.signal.aborted) return;
      const rows = a.instructions.map((i) => `<tr><td class="addr">${esc(i.address)}</td><td class="ins">${esc(i.text)}</td></tr>`).join('');
      this.asm.innerHTML = `<b>Assembler of line ${line}</b> <small>${a.instructions.length} instructions · ${esc(a.binary.split('/').pop() ?? a.binary)}</small>
        ${a.instructions.length ? `<table class="asm"><tbody>${rows}</tbody></table>` : '<p class="note">The line table gives this line no instructions.</p>'}`;
    } catch (e) {
      if (ctl.signal.aborted) return;
      const msg = e instanceof Error ? ((e as { detail?: string }).detail ?? e.message) : String(e);
      this.asm.innerHTML = `<p class="note">No assembler: ${esc(msg)}</p>`;
    }
  }

  /** The statistics of `line` (the seed's min/max/mean/variance per line with the threads). */
  private showStats(line: number | null): void {
    const d = this.data;
    if (!d) return;
    const l = line === null ? undefined : this.byLine.get(line);
    if (!l) {
      this.stats.innerHTML = `<p class="note">${line === null ? 'Point at a line to see its statistics across threads; click it to select its event.' : `Line ${line}: no samples.`}</p>`;
      return;
    }
    const st = l.stats;
    const u = d.unit;
    this.stats.innerHTML = `<div class="source-line-stats"><b>Line ${l.line}</b>
      <dl class="kv">
        <dt>sum</dt><dd>${value(st.total, u)}</dd>
        <dt>mean</dt><dd>${value(st.mean, u)} <small>(${st.threads} threads)</small></dd>
        <dt>mean, all</dt><dd>${value(st.mean_all, u)}</dd>
        <dt>min</dt><dd>${value(st.min, u)} <small>${esc(threadName(st.min_thread))}</small></dd>
        <dt>max</dt><dd>${value(st.max, u)} <small>${esc(threadName(st.max_thread))}</small></dd>
        <dt>std. dev.</dt><dd>${value(st.stddev, u)}</dd>
        <dt>imbalance</dt><dd>${st.imbalance.toFixed(3)}</dd>
      </dl>
      <small>${l.events.length} event${l.events.length === 1 ? '' : 's'} on this line</small></div>`;
  }
}

// Saving a panel: its charts as PNG (ECharts' own rendering, several charts composed at their
// places in the panel) or SVG (the same options rendered again by ECharts' SVG renderer,
// offscreen), and its rows as CSV (an SQL panel's answer, or the panel's HTML table).

import * as echarts from 'echarts';

/** What a panel can save. */
export interface Exportable {
  /** The charts shown in the panel now (hidden ones left out). */
  exportCharts(): echarts.ECharts[];
  /** The panel's rows as CSV text (null: it has none). */
  csv(): string | null;
}

/** A file name from a panel's title: letters, digits, spaces and `. _ ( ) + , = & ' -` kept,
 * anything else (`/`, `:`, `*`, `?`, `"`, ...) replaced by `_`. */
export function fileName(title: string, ext: string): string {
  const base = title
    .replace(/[^\p{L}\p{N} ._()+,=&'-]+/gu, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[ ._]+|[ ._]+$/g, '')
    .slice(0, 100);
  return `${base || 'panel'}.${ext}`;
}

/** Offers `blob` as a download named `name`. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** One CSV field (RFC 4180: quoted when it holds a comma, a quote or a line break). */
function field(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV text of a header and rows. */
export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [header, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}

/** CSV of the first data table in `el` (its header and visible cells), or null. */
export function tableCsv(el: HTMLElement): string | null {
  const table = el.querySelector<HTMLTableElement>('table');
  if (!table) return null;
  const text = (c: Element) => (c as HTMLElement).innerText.replace(/\s+/g, ' ').trim();
  const header = [...table.querySelectorAll('thead th')].map(text);
  const rows = [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map(text));
  return toCsv(header, rows);
}

/** True for a chart drawn by echarts-gl (3D): the SVG renderer cannot draw it. */
function isGl(c: echarts.ECharts): boolean {
  const o = c.getOption() as Record<string, unknown>;
  if (['grid3D', 'globe', 'geo3D', 'mapbox3D'].some((k) => Array.isArray(o[k]) && (o[k] as unknown[]).length > 0)) return true;
  const series = (o.series ?? []) as { type?: string }[];
  return series.some((s) => /3D$|GL$|^surface$/.test(s.type ?? ''));
}

/** Where each chart sits in the union of their boxes, and that union's size. */
function layout(list: echarts.ECharts[]): { boxes: { c: echarts.ECharts; x: number; y: number; w: number; h: number }[]; w: number; h: number } {
  const rects = list.map((c) => ({ c, r: c.getDom().getBoundingClientRect() }));
  const x0 = Math.min(...rects.map((b) => b.r.left));
  const y0 = Math.min(...rects.map((b) => b.r.top));
  const boxes = rects.map(({ c, r }) => ({ c, x: Math.round(r.left - x0), y: Math.round(r.top - y0), w: c.getWidth(), h: c.getHeight() }));
  return { boxes, w: Math.max(...boxes.map((b) => b.x + b.w)), h: Math.max(...boxes.map((b) => b.y + b.h)) };
}

function loadImage(src: string): Promise<HTMLImageElement> {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error('the chart image could not be read'));
    img.src = src;
  });
}

/** A PNG of the charts (at twice the screen's resolution) on white. */
export async function png(list: echarts.ECharts[]): Promise<Blob> {
  if (list.length === 0) throw new Error('this panel has no chart');
  const ratio = 2;
  const opts = { type: 'png' as const, pixelRatio: ratio, backgroundColor: '#fff' };
  const { boxes, w, h } = layout(list);
  const canvas = document.createElement('canvas');
  canvas.width = w * ratio;
  canvas.height = h * ratio;
  const g = canvas.getContext('2d') as CanvasRenderingContext2D;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  for (const b of boxes) g.drawImage(await loadImage(b.c.getDataURL(opts)), b.x * ratio, b.y * ratio, b.w * ratio, b.h * ratio);
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png'));
}

/** The SVG text of one chart: its option drawn again by the SVG renderer (offscreen, no
 * animation); a 3D chart, which only WebGL draws, as its picture inside the SVG. */
function chartSvg(c: echarts.ECharts, w: number, h: number): string {
  if (isGl(c)) {
    const src = c.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: '#fff' });
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><image width="${w}" height="${h}" href="${src}"/></svg>`;
  }
  const off = echarts.init(null, null, { renderer: 'svg', ssr: true, width: w, height: h });
  try {
    const opt = c.getOption() as echarts.EChartsOption;
    off.setOption({ ...opt, animation: false }, true);
    return off.renderToSVGString();
  } finally {
    off.dispose();
  }
}

/** An SVG of the charts, each at its place. */
export function svg(list: echarts.ECharts[]): Blob {
  if (list.length === 0) throw new Error('this panel has no chart');
  const { boxes, w, h } = layout(list);
  let text: string;
  if (boxes.length === 1) text = chartSvg(boxes[0].c, w, h);
  else {
    const parts = boxes.map((b) => chartSvg(b.c, b.w, b.h).replace(/^<svg\b/, `<svg x="${b.x}" y="${b.y}"`));
    text = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>`;
  }
  return new Blob([`<?xml version="1.0" encoding="UTF-8"?>\n${text}`], { type: 'image/svg+xml' });
}

/** The panel head's save menu: PNG, SVG (when the panel has a chart), CSV (when it has rows);
 * each entry says why when it cannot. */
export function exportMenu(title: () => string, source: () => Exportable | null, failed: (e: unknown) => void): HTMLElement {
  const wrap = document.createElement('span');
  wrap.className = 'export';
  const button = document.createElement('button');
  button.className = 'export-button';
  button.title = 'save this panel: PNG, SVG, CSV';
  button.textContent = '⤓';
  const menu = document.createElement('div');
  menu.className = 'export-menu';
  menu.hidden = true;
  const entries: [string, string][] = [
    ['png', 'PNG image'],
    ['svg', 'SVG image'],
    ['csv', 'CSV rows'],
  ];
  const items = entries.map(([format, label]) => {
    const b = document.createElement('button');
    b.dataset.format = format;
    b.textContent = label;
    menu.appendChild(b);
    return b;
  });
  const close = (ev: MouseEvent) => {
    if (!wrap.contains(ev.target as Node)) menu.hidden = true;
  };
  button.addEventListener('click', () => {
    menu.hidden = !menu.hidden;
    if (menu.hidden) return;
    const src = source();
    const charts = src?.exportCharts().length ?? 0;
    const csv = src?.csv() !== null && src?.csv() !== undefined;
    for (const b of items) {
      const ok = b.dataset.format === 'csv' ? csv : charts > 0;
      b.disabled = !ok;
      b.title = ok ? '' : b.dataset.format === 'csv' ? 'this panel has no rows' : 'this panel has no chart';
    }
    document.addEventListener('click', close, { capture: true, once: false });
  });
  menu.addEventListener('click', async (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-format]');
    if (!b || b.disabled) return;
    menu.hidden = true;
    document.removeEventListener('click', close, { capture: true });
    const src = source();
    if (!src) return;
    const format = b.dataset.format as string;
    try {
      let blob: Blob;
      if (format === 'png') blob = await png(src.exportCharts());
      else if (format === 'svg') blob = svg(src.exportCharts());
      else blob = new Blob([src.csv() ?? ''], { type: 'text/csv' });
      download(blob, fileName(title(), format));
    } catch (e) {
      failed(new Error(`could not save the panel as ${format.toUpperCase()}: ${e instanceof Error ? e.message : String(e)}`));
    }
  });
  wrap.append(button, menu);
  return wrap;
}

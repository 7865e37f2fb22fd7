// Helpers of the dashboard browser tests (dashboard.test.mjs, report.test.mjs): wait until a
// dashboard has drawn, list its panels with what they show, assert every panel drew.

import assert from 'node:assert/strict';
import { drawn } from './harness.mjs';

/** Waits until every panel of the dashboard has drawn: an SQL panel has its answer (or an
 * error), a built-in view its chart's series. */
export async function settled(page, timeout = 30000) {
  await page.waitForSelector('main.dash[data-revision]', { timeout });
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('main.dash > .panel')].every((p) => {
        if (p.querySelector('.spec-error') || p.querySelector('.panel-error:not([hidden])')) return true;
        const info = p.querySelector('.sql-info');
        if (info) return info.textContent !== '';
        const c = window.perfscape.charts.get(p.dataset.view);
        return !c || (c.getOption().series ?? []).length > 0;
      }),
    null,
    { timeout },
  );
  await page.waitForTimeout(300);
}

/** Per panel: its id, title, whether it shows an error (and its text), table rows, chart ink. */
export async function panels(page) {
  const list = await page.$$eval('main.dash > .panel', (els) =>
    els.map((p) => ({
      id: p.id,
      view: p.dataset.view,
      title: p.querySelector('h2')?.textContent ?? '',
      error: (p.querySelector('.spec-error') ?? p.querySelector('.panel-error:not([hidden])'))?.textContent ?? null,
      empty: p.querySelector('.sql-empty:not([hidden])')?.textContent ?? null,
      rows: p.querySelectorAll('tbody tr').length,
      chart: !!p.querySelector('.chart'),
      text: p.querySelector('.panel-body')?.textContent.trim().length ?? 0,
    })),
  );
  for (const p of list) p.ink = p.chart ? (await drawn(page, `#${p.id} .chart`)).ink : 0;
  return list;
}

/** Asserts every panel drew: a table has rows, a chart has ink; no errors, no empty panel. */
export function allDrew(list, what) {
  assert.ok(list.length > 0, `${what}: panels`);
  for (const p of list) {
    assert.equal(p.error, null, `${what}: ${p.title}: error`);
    assert.equal(p.empty, null, `${what}: ${p.title}: empty`);
    // A table has rows, a chart ink; a view of text only (run information) has its text.
    assert.ok(p.rows > 0 || p.ink > 0.02 || (!p.chart && p.text > 100), `${what}: ${p.title} drew (rows ${p.rows}, ink ${p.ink.toFixed(3)}, text ${p.text})`);
  }
}


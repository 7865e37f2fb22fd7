// Browser test of the source panel on the event-based-sampling run
// tau-real/omp-matmul-t4-tauexec-ebs with tau-real/src as the source root: the text of
// omp_matmul.c highlighted, a heat gutter on exactly the API's sampled lines, the line
// overview strip beside it, the statistics of a line on hover, a click on a line selecting its
// [SAMPLE] event in the other panels (the ranked table), and a clear note when the server has
// no source directory. At 1600×1000 and 1280×800; PERFSCAPE_SHOTS=DIR keeps screenshots.
// Run alone: `PERFSCAPE_BIN=... node --test tests/source.test.mjs`.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { open, selection, servedForSuite, settled, shared } from './harness.mjs';

const run = path.join(shared, 'corpus/tau-real/omp-matmul-t4-tauexec-ebs');
const src = path.join(shared, 'corpus/tau-real/src');
const shots = process.env.PERFSCAPE_SHOTS;

function api(page, query = '') {
  return page.evaluate((q) => fetch(`/api/source${q}`).then((r) => r.json()), query);
}

async function shot(page, name) {
  if (shots) await page.screenshot({ path: path.join(shots, `${name}.png`) });
}

describe('source panel on the EBS run with its sources', () => {
  const s = servedForSuite(() => run, ['--source-dir', src]);

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    test(`the text with its heat gutter and overview at ${viewport.width}×${viewport.height}`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?focus=source`, viewport);
      await page.waitForSelector('#panel-source tr[data-line="12"]');
      const d = await api(page);
      assert.equal(d.file, '/home/user/tauprogs/omp_matmul.c');
      // Every line of the text, highlighted as C.
      const rows = await page.$$eval('#panel-source tr[data-line]', (trs) => trs.map((t) => Number(t.dataset.line)));
      assert.equal(rows.length, d.line_count);
      assert.ok((await page.$$('#panel-source td.code .hljs-keyword')).length > 10, 'keywords highlighted');
      const line12 = await page.textContent('#panel-source tr[data-line="12"] td.code');
      assert.ok(line12.includes('c[i * n + j] += aik * b[k * n + j]'), line12);
      // A coloured gutter on exactly the sampled lines.
      const hot = await page.$$eval('#panel-source tr[data-line]', (trs) =>
        trs.filter((t) => t.querySelector('td.heat').style.background !== '').map((t) => Number(t.dataset.line)));
      assert.deepEqual(hot, d.lines.map((l) => l.line));
      assert.deepEqual(hot, [11, 12]);
      // The overview strip: one block per bin, the skipped run after line 12 not drawn.
      const bins = await page.$$eval('#panel-source .source-strip .bin', (bs) => bs.map((b) => [Number(b.dataset.first), Number(b.dataset.last)]));
      assert.deepEqual(bins, d.overview.map((b) => [b.first, b.last]));
      assert.equal(d.skipped_at_end, 22);
      // Hovering a line shows its statistics with the thread ids.
      await page.hover('#panel-source tr[data-line="11"] td.code');
      const stats = await page.textContent('#panel-source .source-stats');
      assert.match(stats, /Line 11/);
      // Threads named as the page names them: 0.0.2 is "rank 0, thread 2".
      assert.equal(d.lines[0].stats.max_thread, '0.0.2');
      assert.ok(stats.includes('rank 0, thread 2'), stats);
      await shot(page, `source-${viewport.width}`);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }

  test('a click on a line selects its event in the other panels', async () => {
    const { page, errors } = await open(s.br, s.server.url);
    await page.waitForSelector('#panel-source tr[data-line="12"]');
    await page.locator('#panel-source tr[data-line="12"]').scrollIntoViewIfNeeded();
    const d = await api(page);
    const want = d.lines.find((l) => l.line === 12).events[0];
    await page.click('#panel-source tr[data-line="12"] td.code');
    await page.waitForFunction((e) => window.perfscape.store.get().event === e, want);
    assert.equal((await selection(page)).event, want);
    assert.match(page.url(), new RegExp(`event=${want}`));
    // The ranked table follows.
    await page.waitForSelector(`#panel-ranked tr.selected[data-id="${want}"]`);
    const name = await page.getAttribute(`#panel-ranked tr.selected[data-id="${want}"]`, 'title');
    assert.ok(name.includes('omp_matmul.c} {12}'), name);
    assert.ok(await page.$('#panel-source tr.selected[data-line="12"]'));
    await shot(page, 'source-page-1600');
    // Selecting the line-11 event elsewhere moves the source panel's selection.
    const other = d.lines.find((l) => l.line === 11).events[0];
    await page.evaluate((e) => window.perfscape.store.set({ event: e }), other);
    await page.waitForSelector('#panel-source tr.selected[data-line="11"]');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('source panel and the heat map of source lines', () => {
  const s = servedForSuite(() => run, ['--source-dir', src]);

  test('a click on a line outlines that line in the heat map (rows = lines)', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?rows=lines`);
    await page.waitForSelector('#panel-source tr[data-line="12"]');
    await page.locator('#panel-source tr[data-line="12"]').scrollIntoViewIfNeeded();
    await page.click('#panel-source tr[data-line="12"] td.ln');
    await page.waitForFunction(() => window.perfscape.store.get().event !== null);
    await settled(page);
    const got = await page.evaluate(() => {
      const c = window.perfscape.charts.get('heatmap');
      const o = c.getOption();
      const outlines = o.graphic[0].elements.filter((e) => e.type === 'rect' && e.style?.lineWidth === 2.5);
      const labels = o.yAxis[0].data;
      const row = labels.findIndex((l) => String(l).endsWith(':12'));
      return { n: outlines.length, y: outlines[0] ? outlines[0].shape.y + outlines[0].shape.height / 2 : null, rowY: c.convertToPixel({ yAxisIndex: 0 }, row), row, labels };
    });
    assert.equal(got.n, 1, JSON.stringify(got));
    assert.ok(got.row >= 0, JSON.stringify(got.labels));
    assert.ok(Math.abs(got.y - got.rowY) < 1, JSON.stringify(got));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('source panel without a source directory', () => {
  const s = servedForSuite(() => run);

  test('says why there is no text and still lists the sampled lines', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?focus=source`);
    await page.waitForSelector('#panel-source .source-missing');
    const note = await page.textContent('#panel-source .source-missing');
    assert.match(note, /--source-dir/);
    const rows = await page.$$eval('#panel-source tr[data-line]', (trs) => trs.map((t) => Number(t.dataset.line)));
    assert.deepEqual(rows, [11, 12]);
    await shot(page, 'source-missing-1600');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('source panel with the executable (serve --binary)', () => {
  // omp_matmul.c built with the run's build line into a temporary directory.
  const dir = mkdtempSync(path.join(tmpdir(), 'perfscape-asm-'));
  const bin = path.join(dir, 'omp_matmul');
  execFileSync('gcc', ['-O2', '-g', '-fopenmp', '-no-pie', '-fno-omit-frame-pointer', '-o', bin, path.join(src, 'omp_matmul.c')]);
  const s = servedForSuite(() => run, ['--source-dir', src, '--binary', bin]);
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a click on a line lists its instructions', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?focus=source`);
    await page.waitForSelector('#panel-source tr[data-line="12"]');
    await page.click('#panel-source tr[data-line="12"] td.ln');
    await page.waitForSelector('#panel-source .source-asm table.asm');
    const d = await page.evaluate(() => fetch('/api/disasm?file=/home/user/tauprogs/omp_matmul.c&first=12').then((r) => r.json()));
    assert.ok(d.instructions.length > 0);
    const rows = await page.$$eval('#panel-source .source-asm table.asm tr', (trs) => trs.map((t) => t.querySelector('.addr').textContent));
    assert.deepEqual(rows, d.instructions.map((i) => i.address));
    assert.match(await page.textContent('#panel-source .source-asm'), /Assembler of line 12/);
    await shot(page, 'source-asm-1600');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

// Browser test of the communication matrix panel on the 64-rank commmatrix example: the cells
// are drawn, a cell's value equals the API's (itself checked against ParaProf's --writecomm by
// crates/perfscape-server/tests/comm.rs), a click on a cell selects the sender's thread, and the
// panel is left out of a run without a communication matrix.
// Run: PERFSCAPE_BIN=... node --test tests/comm.test.mjs (screenshots: COMM_SHOTS=DIR).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import path from 'node:path';
import { drawn, open, option, repo, selection, servedForSuite, settled, shared } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');

describe('communication matrix of the 64-rank run', () => {
  const s = servedForSuite(() => np64);

  test('cells drawn, values as the API, a click selects the sender', async () => {
    const { page, errors } = await open(s.br, s.server.url);
    await page.locator('#panel-comm').scrollIntoViewIfNeeded();
    await settled(page);
    const o = await option(page, 'comm');
    assert.equal(o.xAxis[0].data.length, 64);
    assert.equal(o.yAxis[0].data.length, 64);
    const cells = o.series[0].data;
    const api = await page.evaluate(() => fetch('/api/comm?h=64&w=64').then((r) => r.json()));
    const expected = api.values.filter((v) => v !== null).length;
    assert.ok(expected >= 64, `${expected} pairs`);
    assert.equal(cells.length, expected);
    // Every drawn cell [receiver column, sender row, colour, value] holds the API's value.
    for (const [c, r, , v] of cells) assert.equal(v, api.values[r * 64 + c], `${r} → ${c}`);
    const pix = await drawn(page, '#panel-comm');
    assert.ok(pix.colours > 10, JSON.stringify(pix));
    if (process.env.COMM_SHOTS) await page.screenshot({ path: path.join(process.env.COMM_SHOTS, 'comm-1600.png'), fullPage: false, clip: await page.locator('#panel-comm').boundingBox() });
    // Click the cell of sender 5 (to its first receiver).
    const [c, r] = cells.find(([, rr]) => rr === 5);
    const at = await page.evaluate(([x, y]) => window.perfscape.charts.get('comm').convertToPixel({ gridIndex: 0 }, [x, y]), [c, r]);
    const box = await page.locator('#panel-comm .chart').first().boundingBox();
    await page.mouse.click(box.x + at[0], box.y + at[1]);
    await page.waitForTimeout(300);
    assert.equal((await selection(page)).thread, '5.0.0');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the path and statistic selectors ask for them', async () => {
    const { page } = await open(s.br, s.server.url, { width: 1280, height: 800 });
    await page.locator('#panel-comm').scrollIntoViewIfNeeded();
    await page.selectOption('#panel-comm select.comm-path', 'MPI_Isend()');
    await page.selectOption('#panel-comm select.comm-stat', 'calls');
    await settled(page);
    const api = await page.evaluate(() => fetch('/api/comm?h=64&w=64&stat=calls&path=MPI_Isend()').then((r) => r.json()));
    const o = await option(page, 'comm');
    for (const [c, r, , v] of o.series[0].data) assert.equal(v, api.values[r * 64 + c]);
    if (process.env.COMM_SHOTS) await page.screenshot({ path: path.join(process.env.COMM_SHOTS, 'comm-1280.png'), clip: await page.locator('#panel-comm').boundingBox() });
    await page.close();
  });
});

describe('a run without a communication matrix', () => {
  const s = servedForSuite(() => path.join(shared, 'corpus/tau-real/mpi-stencil-np4-profile'));

  test('has no comm panel', async () => {
    const { page } = await open(s.br, s.server.url);
    assert.equal(await page.locator('#panel-comm').count(), 0);
    await page.close();
  });
});

// Browser tests of the page state and the panel base: a superseded answer is never drawn, the
// URL round-trips the selection and every panel's settings, every <select> offers exactly the
// schema's values, a bad URL value falls back to its default without breaking the page, errors
// show in their panel, shared sessions take only valid shared keys, Back and Forward step
// through the selections.
// Run: `npm run test:browser` (needs the perfscape debug binary and Debian's chromium).

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { browser, inFlight, open, option, repo, selection, serve, shared } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');

/** What a view drew, for comparing two pages: its chart's series data and axis names. */
async function drawnData(page) {
  return page.evaluate(() => {
    const out = {};
    for (const [name, c] of window.perfscape.charts) {
      if (!c || typeof c.getOption !== 'function') continue;
      const o = c.getOption();
      out[name] = JSON.stringify({
        series: (o.series ?? []).map((s) => s.data),
        x: (o.xAxis ?? []).map((a) => [a.name, a.data]),
        y: (o.yAxis ?? []).map((a) => [a.name, a.data]),
      });
    }
    out.ranked = document.querySelector('#panel-ranked tbody')?.textContent;
    out.event = document.querySelector('#panel-event .event-title')?.textContent;
    return out;
  });
}

/** Holds the answers of requests matching `match` for `ms`, then lets them through. */
async function delay(page, match, ms) {
  const held = [];
  await page.route(
    (url) => match(url),
    async (route) => {
      held.push(route.request().url());
      await new Promise((r) => setTimeout(r, ms));
      // The page may have cancelled the request meanwhile.
      await route.continue().catch(() => {});
    },
  );
  return held;
}

describe('state and panels on the 64-rank run', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(np64);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('a superseded answer is never drawn: the event view shows the newer event', async () => {
    const { page, errors } = await open(br, server.url);
    const events = (await page.evaluate(() => fetch('/api/events').then((r) => r.json()))).rows;
    const [slow, fast] = [events[3], events[6]];
    const held = await delay(page, (u) => u.pathname === `/api/event/${slow.id}`, 2500);
    const settle = inFlight(page);
    const failed = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await page.evaluate((id) => window.perfscape.store.set({ event: id }), slow.id);
    await page.waitForTimeout(300);
    await page.evaluate((id) => window.perfscape.store.set({ event: id }), fast.id);
    await page.waitForFunction((n) => document.querySelector('#panel-event .event-title')?.textContent.includes(n), fast.name);
    // Let the slow answer arrive, then look again.
    await page.waitForTimeout(2500);
    await settle();
    assert.equal(held.length, 1, 'the slow request was made');
    const title = await page.textContent('#panel-event .event-title');
    assert.ok(title.includes(fast.name) && !title.includes(slow.name), title);
    const bars = await option(page, 'event-bars');
    assert.equal(bars.series[0].data[0].value, fast.stats.max);
    assert.ok(failed.some((u) => u.includes(`/api/event/${slow.id}`)), 'the superseded request was cancelled');
    assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
  });

  test('a superseded answer is never drawn: after a slow kind, every view equals a fresh page', async () => {
    const { page, errors } = await open(br, server.url);
    const held = await delay(page, (u) => u.pathname.startsWith('/api/') && u.searchParams.get('kind') === 'calls', 2500);
    const settle = inFlight(page);
    await page.evaluate(() => window.perfscape.store.set({ kind: 'calls' }));
    await page.waitForTimeout(300);
    await page.evaluate(() => window.perfscape.store.set({ kind: 'inclusive' }));
    // The slow answers arrive after the newer ones; then nothing is under way.
    await page.waitForTimeout(2500);
    await settle();
    assert.ok(held.length >= 4, `slow requests: ${held.length}`);
    const got = await drawnData(page);
    const fresh = await open(br, page.url());
    await inFlight(fresh.page)();
    const want = await drawnData(fresh.page);
    assert.ok(Object.keys(want).length >= 8, Object.keys(want).join());
    const stale = Object.keys(want).filter((k) => got[k] !== want[k]);
    assert.deepEqual(stale, [], 'every view shows the answer of the newer request');
    assert.match(got.event, /inclusive/);
    assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
    await fresh.page.close();
  });

  test('the URL round-trips the selection and every panel setting', async () => {
    const { page } = await open(br, server.url);
    // Every key kept in the URL, at a value other than its default: toUrl -> fromUrl gives it back.
    const roundTrip = await page.evaluate(() => {
      const { schema, url } = window.perfscape;
      const s = { ...window.perfscape.store.get() };
      const special = { thread: '2.0.0', filter: 'MPI x&y', cloud: '1,,3', focus: 'heatmap', theme: 'dark', cols: 'name,max,calls', csort: 'MPI wait', sfile: '/home/u/src/a b.c', tw: '1000-250000', tsel: '2:1500:2700:3', tq: 'MPI_Isend', tcol: '0,rank 3' };
      for (const [k, f] of Object.entries(schema)) {
        if (!f.url) continue;
        if (k in special) s[k] = special[k];
        else if (typeof f.default === 'boolean') s[k] = !f.default;
        else if (f.values) s[k] = f.values.find((v) => v !== f.default);
        else if (f.default === null) s[k] = 7;
        else s[k] = Math.min(f.max ?? Infinity, f.default + 1);
      }
      const back = url.fromUrl(url.toUrl(s));
      return { s, back, text: url.toUrl(s) };
    });
    assert.deepEqual(roundTrip.back, { ...roundTrip.s, revision: 0 }, roundTrip.text);
    // A page opened at a URL with settings of every group shows them and keeps them in its URL.
    const params = {
      kind: 'inclusive', event: '3', thread: '2.0.0', callpaths: '1', reduce: 'sum', threads: 'value', subset: 'top', top: '16',
      norm: 'global', skip: '5', bin: '2', strips: '2', bins: '12', scope: 'mean', tx: '32', ty: '16', peaks: '3', filter: 'MPI',
    };
    const q = new URLSearchParams(params).toString();
    const { page: p2, errors } = await open(br, `${server.url}?${q}`);
    const sel = await selection(p2);
    for (const [k, v] of Object.entries(params)) assert.equal(String(sel[k] === true ? 1 : sel[k]), v, k);
    const inUrl = new URL(p2.url()).searchParams;
    for (const [k, v] of Object.entries(params)) assert.equal(inUrl.get(k), v, `${k} in the page's URL`);
    // The controls show the state.
    for (const k of ['kind', 'reduce', 'threads', 'subset', 'norm', 'scope', 'tx', 'ty', 'peaks']) {
      assert.equal(await p2.$eval(`select[data-key="${k}"]`, (e) => e.value), params[k], `control of ${k}`);
    }
    for (const k of ['top', 'skip', 'bin', 'strips', 'bins']) {
      assert.equal(await p2.$eval(`input[data-key="${k}"]`, (e) => e.value), params[k], `control of ${k}`);
    }
    assert.equal(await p2.$eval('input[data-key="filter"]', (e) => e.value), 'MPI');
    assert.equal(await p2.$eval('input[data-key="callpaths"]', (e) => e.checked), true);
    // Changing settings in the panels writes them to the URL; a page opened there has them.
    await p2.selectOption('select[data-key="norm"]', 'event');
    await p2.fill('input[data-key="skip"]', '7');
    await p2.press('input[data-key="skip"]', 'Enter');
    await p2.selectOption('select[data-key="peaks"]', '10');
    await p2.waitForFunction(() => /skip=7/.test(window.location.search) && /peaks=10/.test(window.location.search));
    assert.doesNotMatch(p2.url(), /norm=/);
    const before = await selection(p2);
    const { page: p3 } = await open(br, p2.url());
    assert.deepEqual(await selection(p3), before);
    assert.deepEqual(errors, []);
    await Promise.all([page.close(), p2.close(), p3.close()]);
  });

  test('Back and Forward step through the selections; the tab names the run', async () => {
    const { page, errors } = await open(br, server.url);
    assert.equal(await page.title(), 'mpi-stencil-np64-callpath-commmatrix · perfscape');
    await page.waitForSelector('#panel-ranked tbody tr');
    const first = (await selection(page)).event;
    assert.equal(typeof first, 'number');
    // Two clicks in the ranked table, each a step of history.
    const rows = page.locator('#panel-ranked tbody tr');
    await rows.nth(2).click();
    await page.waitForFunction((e) => window.perfscape.store.get().event !== e, first);
    const second = (await selection(page)).event;
    await rows.nth(4).click();
    await page.waitForFunction((e) => window.perfscape.store.get().event !== e, second);
    const third = (await selection(page)).event;
    assert.equal(new Set([first, second, third]).size, 3);
    // A setting that is not a step (the heat map's colour scale) replaces the entry.
    await page.evaluate(() => window.perfscape.store.set({ norm: 'global' }));
    await page.goBack();
    await page.waitForFunction((e) => window.perfscape.store.get().event === e, second);
    assert.equal(new URL(page.url()).searchParams.get('event'), String(second));
    await page.waitForFunction((e) => document.querySelector('#panel-ranked tr.selected')?.dataset.id === String(e), second);
    await page.goBack();
    await page.waitForFunction((e) => window.perfscape.store.get().event === e, first);
    await page.goForward();
    await page.waitForFunction((e) => window.perfscape.store.get().event === e, second);
    // Still in the application, every view showing the restored selection.
    assert.match(page.url(), /^http:\/\/(127\.0\.0\.1|localhost)/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a bad URL value falls back to its default without breaking the page', async () => {
    const bad = 'kind=bogus&threads=zzz&skip=-5&bins=abc&event=x&metric=99&tx=7&focus=nopanel&callpaths=maybe&sample=3&thread=nothread&cloud=a,b&rows=lines&top=1.5&r0=-1';
    const { page, errors } = await open(br, `${server.url}?${bad}&norm=global`);
    const sel = await selection(page);
    const schema = await page.evaluate(() => window.perfscape.schema);
    for (const k of ['kind', 'threads', 'skip', 'bins', 'metric', 'tx', 'focus', 'callpaths', 'sample', 'thread', 'cloud', 'rows', 'top', 'r0']) {
      assert.deepEqual(sel[k], schema[k].default, k);
    }
    // The valid value beside them is kept; the ranked table picked the top event.
    assert.equal(sel.norm, 'global');
    assert.equal(typeof sel.event, 'number');
    // The URL no longer carries the bad values.
    assert.equal(new URL(page.url()).searchParams.get('kind'), null);
    assert.equal(new URL(page.url()).searchParams.get('metric'), null);
    assert.equal(new URL(page.url()).searchParams.get('norm'), 'global');
    // Every panel is shown and drew.
    assert.equal((await page.$$('#panel-ranked tbody tr')).length, 18);
    assert.equal((await option(page, 'heatmap')).xAxis[0].data.length, 64);
    // The thread axis speaks of ranks (one thread per rank here): ticks `12`, not `12.0.0`.
    assert.match((await option(page, 'heatmap')).xAxis[0].name, /^ranks 0–63 of 64/);
    const ticks = await page.evaluate(() => {
      const f = window.perfscape.charts.get('heatmap').getOption().xAxis[0].axisLabel.formatter;
      return [f('12.0.0'), f('0.0.0 – 15.0.0')];
    });
    assert.deepEqual(ticks, ['12', '0–15']);
    assert.equal((await option(page, 'event-bars')).series[0].data.length, 64);
    assert.ok(await page.isVisible('#panel-terrain'));
    assert.equal(await page.$$eval('.panel-error:not([hidden])', (e) => e.length), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a closed panel frees its charts, controls and pending requests; the other views go on', async () => {
    const { page, errors } = await open(br, server.url);
    const events = (await page.evaluate(() => fetch('/api/events').then((r) => r.json()))).rows;
    // A slow answer under way when the panel closes is cancelled and never drawn.
    await delay(page, (u) => u.pathname === `/api/event/${events[2].id}`, 1500);
    const failed = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await page.evaluate((id) => window.perfscape.store.set({ event: id }), events[2].id);
    await page.waitForTimeout(200);
    await page.evaluate(() => window.perfscape.close('event'));
    assert.equal(await page.$('#panel-event'), null);
    assert.deepEqual(await page.evaluate(() => ['event-bars', 'event-hist'].map((n) => window.perfscape.charts.has(n))), [false, false]);
    await page.waitForTimeout(1800);
    assert.ok(failed.some((u) => u.includes(`/api/event/${events[2].id}`)), 'the pending request was cancelled');
    // The others still follow the selection.
    await page.click('#panel-ranked tbody tr:has-text("MPI_Waitall()")');
    await page.waitForFunction(() => [...document.querySelectorAll('#panel-calltree tr.selected td.name')].some((t) => /MPI_Waitall/.test(t.textContent)));
    assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
  });

  test('an error shows in its panel; the next answer clears it', async () => {
    const { page } = await open(br, server.url);
    let fail = true;
    await page.route('**/api/terrain?*', (route) =>
      fail ? route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"terrain broke"}' }) : route.continue(),
    );
    await page.selectOption('select[data-key="tx"]', '32');
    await page.waitForSelector('#panel-terrain .panel-error:not([hidden])');
    assert.match(await page.textContent('#panel-terrain .panel-error'), /terrain broke/);
    // The other panels are untouched; the terrain's chart is still there.
    assert.equal(await page.$$eval('.panel-error:not([hidden])', (e) => e.length), 1);
    assert.equal(await page.$$eval('#panel-terrain .chart', (e) => e.length), 1);
    fail = false;
    await page.selectOption('select[data-key="tx"]', '16');
    await page.waitForSelector('#panel-terrain .panel-error', { state: 'hidden' });
    assert.equal((await option(page, 'terrain')).series[0].type, 'surface');
    await page.close();
  });
});

describe('a run observed over time (np8 snapshots)', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(np8);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('every <select> offers exactly the schema\'s values', async () => {
    const { page, errors } = await open(br, server.url);
    const schema = await page.evaluate(() => window.perfscape.schema);
    const run = await page.evaluate(() => window.perfscape.ctx.run);
    const selects = await page.$$eval('select', (els) =>
      els.map((e) => ({ key: e.dataset.key ?? null, dynamic: e.dataset.dynamic === '1', values: [...e.options].map((o) => o.value) })),
    );
    const seen = new Set();
    for (const s of selects) {
      assert.ok(s.key && s.key in schema, `a <select> bound to a state key: ${JSON.stringify(s)}`);
      seen.add(s.key);
      if (s.key === 'metric') assert.deepEqual(s.values, run.metrics.map((_, i) => String(i)));
      else if (s.key === 'cloud') assert.ok(s.dynamic && s.values[0] === '' && s.values.slice(1).every((v) => /^\d+$/.test(v)));
      else if (s.key === 'csort') assert.ok(s.dynamic && s.values[0] === '' && s.values.includes('other'), JSON.stringify(s));
      else if (s.key === 'sfile') assert.ok(s.dynamic, JSON.stringify(s));
      else if (s.key === 'dashboard') assert.deepEqual(s.values, ['', ...run.dashboards.map((d) => String(d.index))]);
      else {
        assert.ok(!s.dynamic, s.key);
        assert.deepEqual(s.values, schema[s.key].values.map(String), `options of ${s.key}`);
      }
    }
    // Every enum of the schema has its <select> on this page (but those of panels the run does
    // not show: the compare panel's without compared runs).
    const shown = await page.$$eval('section.panel', (els) => els.map((e) => e.dataset.view));
    const selection = ['selection', 'layout', 'runtime'];
    const enums = Object.entries(schema)
      .filter(([, f]) => f.values && (selection.includes(f.scope) || shown.includes(f.scope)))
      .map(([k]) => k);
    assert.deepEqual(enums.filter((k) => !seen.has(k)), []);
    // Number inputs take the schema's range.
    const inputs = await page.$$eval('input[data-key]:not([data-dynamic])[type="number"], input[data-key]:not([data-dynamic])[type="range"]', (els) =>
      els.map((e) => ({ key: e.dataset.key, min: e.min, max: e.max })),
    );
    assert.ok(inputs.length >= 6);
    for (const i of inputs) {
      assert.equal(i.min, String(schema[i.key].min), `min of ${i.key}`);
      const max = schema[i.key].max;
      assert.equal(i.max, max >= Number.MAX_SAFE_INTEGER ? '' : String(max), `max of ${i.key}`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a superseded answer is never drawn: a slow sample, then another one', async () => {
    const { page, errors } = await open(br, server.url);
    const held = await delay(page, (u) => u.pathname.startsWith('/api/') && u.searchParams.get('sample') === '3', 2500);
    const settle = inFlight(page);
    await page.evaluate(() => window.perfscape.store.set({ sample: 3 }));
    await page.waitForTimeout(300);
    await page.evaluate(() => window.perfscape.store.set({ sample: 12 }));
    await page.waitForTimeout(2500);
    await settle();
    assert.ok(held.length >= 4, `slow requests: ${held.length}`);
    const got = await drawnData(page);
    const fresh = await open(br, page.url());
    await inFlight(fresh.page)();
    const want = await drawnData(fresh.page);
    assert.ok(['trend', 'kiviat', 'pointcloud', 'heatmap', 'event-bars'].every((k) => k in want), Object.keys(want).join());
    const stale = Object.keys(want).filter((k) => got[k] !== want[k]);
    assert.deepEqual(stale, [], 'every view shows the answer of the newer request');
    assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
    await fresh.page.close();
  });
});

test('shared session: panel settings are relayed, invalid or local keys are not', async () => {
  const server = await serve(np64, ['--share']);
  const br = await browser();
  try {
    const a = await open(br, server.url);
    const b = await open(br, server.url);
    await b.page.waitForFunction(() => document.querySelectorAll('#presence .peer').length === 2);
    // A panel setting changed in A's controls shows in B's state and controls.
    await a.page.selectOption('select[data-key="norm"]', 'global');
    await b.page.waitForFunction(() => window.perfscape.store.get().norm === 'global');
    assert.equal(await b.page.$eval('select[data-key="norm"]', (e) => e.value), 'global');
    // A peer sending values the schema does not allow (or a local counter): dropped, the rest kept.
    await a.page.evaluate(() =>
      window.perfscapeSocket.send(JSON.stringify({ type: 'selection', state: { kind: 'bogus', revision: 99, skip: -3, scope: 'mean' } })),
    );
    await b.page.waitForFunction(() => window.perfscape.store.get().scope === 'mean');
    const sb = await selection(b.page);
    assert.equal(sb.kind, 'exclusive');
    assert.equal(sb.revision, 0);
    assert.equal(sb.skip, 10);
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await br.close();
    server.stop();
  }
});

// Browser tests of the page around the views (issue 18, points 8–10): what a large run shows
// while it loads, the help, keyboard use, panel heads and axis names at 1280×800, the dark
// theme, and a live replay that waits for the page and starts again from its first sample.
// Run: `PERFSCAPE_BIN=... node --test tests/page.test.mjs` (needs the debug binary and chromium).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import path from 'node:path';
import { browser, drawn, open, repo, selection, serve, shared, servedForSuite } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

/** Holds the requests whose path is `pathname` until `release()` is called. */
async function hold(page, pathname) {
  let release;
  const gate = new Promise((r) => (release = r));
  let seen = 0;
  await page.route((u) => u.pathname === pathname, async (route) => {
    seen++;
    await gate;
    await route.continue();
  });
  return { release, seen: () => seen };
}

/** Every axis name of the 2D charts shown, and whether its text lies inside its chart. */
function axisNames(page) {
  return page.evaluate(() => {
    const out = [];
    for (const [name, c] of window.perfscape.charts) {
      if (!c || typeof c.getOption !== 'function' || c.isDisposed()) continue;
      const dom = c.getDom();
      if (!dom.offsetWidth || !dom.offsetHeight) continue;
      const o = c.getOption();
      const axes = [...(o.xAxis ?? []), ...(o.yAxis ?? [])].filter((a) => a.name && a.show !== false);
      if (!axes.length) continue;
      const texts = c.getZr().storage.getDisplayList(true).filter((e) => (e.type === 'text' || e.type === 'tspan') && !e.ignore && !e.invisible);
      for (const a of axes) {
        const el = texts.find((t) => t.style?.text === a.name || (t.style?.text && a.name.startsWith(t.style.text.replace(/…$/, ''))));
        if (!el) {
          out.push({ chart: name, axis: a.name, drawn: false });
          continue;
        }
        const r = el.getBoundingRect().clone();
        r.applyTransform(el.getComputedTransform());
        const inside = r.x >= -1 && r.y >= -1 && r.x + r.width <= dom.offsetWidth + 1 && r.y + r.height <= dom.offsetHeight + 1;
        out.push({ chart: name, axis: a.name, drawn: true, inside, rect: [r.x, r.y, r.width, r.height].map(Math.round), size: [dom.offsetWidth, dom.offsetHeight] });
      }
    }
    return out;
  });
}

describe('the page around the views (64-rank run)', () => {
  const s = servedForSuite(() => np64);

  for (const size of SIZES) {
    const at = `${size.width}×${size.height}`;

    test(`${at}: a loading message names the run and what is fetched; panels say loading until they draw`, async () => {
      const page = await s.br.newPage({ viewport: size });
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      const run = await hold(page, '/api/run');
      const layout = await hold(page, '/api/layout');
      const events = await hold(page, '/api/events');
      const overview = await hold(page, '/api/overview');
      await page.goto(s.server.url);
      // Before the run information arrives: never a blank page.
      await page.waitForSelector('#page-loading');
      assert.ok(await page.isVisible('#page-loading'));
      assert.match(await page.textContent('#page-loading'), /Loading the run.*run information/s);
      run.release();
      // The run is known: its name, and what is fetched now.
      await page.waitForFunction(() => /layout/.test(document.querySelector('#page-loading')?.textContent ?? ''));
      let text = await page.textContent('#page-loading');
      assert.match(text, /mpi-stencil-np64-callpath-commmatrix/);
      assert.match(text, /64 threads/);
      layout.release();
      // The header is there; the panels wait for the ranked events, and the message says so.
      await page.waitForSelector('header .brand');
      await page.waitForFunction(() => /ranked events/.test(document.querySelector('#page-loading')?.textContent ?? ''));
      assert.ok(await page.isVisible('#page-loading'));
      text = await page.textContent('#page-loading');
      assert.match(text, /mpi-stencil-np64-callpath-commmatrix/);
      events.release();
      // The panels are there, the message gone; the overview, still waiting, says so.
      await page.waitForSelector('#panel-overview');
      await page.waitForFunction(() => !document.querySelector('#page-loading'));
      assert.ok(overview.seen() >= 1);
      const placeholder = await page.$eval('#panel-overview', (p) => ({ pending: p.classList.contains('pending'), after: getComputedStyle(p.querySelector('.panel-body'), '::after').content }));
      assert.deepEqual(placeholder, { pending: true, after: '"loading…"' });
      assert.ok(await page.isVisible('#panel-overview'));
      overview.release();
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      await page.waitForFunction(() => document.querySelectorAll('section.panel.pending').length === 0, null, { timeout: 30000 });
      assert.ok((await page.$$eval('#panel-ranked tbody tr', (r) => r.length)) > 10);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`${at}: the help opens from the header, explains blank cells and skip marks, and closes with Escape`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      assert.equal(await page.$eval('#help', (d) => d.open), false);
      await page.click('#help-button');
      assert.equal(await page.$eval('#help', (d) => d.open), true);
      assert.ok(await page.isVisible('#help'));
      const text = await page.textContent('#help');
      assert.match(text, /blank cell.*absent on that thread/is);
      assert.match(text, /dashed line in the overview.*skipped/is);
      assert.match(text, /colour per event/);
      assert.match(text, /↑/);
      await page.keyboard.press('Escape');
      assert.equal(await page.$eval('#help', (d) => d.open), false);
      // `?` opens it too.
      await page.keyboard.press('?');
      assert.equal(await page.$eval('#help', (d) => d.open), true);
      await page.keyboard.press('Escape');
      assert.equal(await page.$eval('#help', (d) => d.open), false);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`${at}: Tab reaches the ranked table with a visible ring; ↑/↓ step through the events; Escape restores a maximized panel`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      await page.locator('body').click({ position: { x: 2, y: 2 } }).catch(() => {});
      const order = [];
      let ring = null;
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press('Tab');
        const f = await page.evaluate(() => {
          const el = document.activeElement;
          const panel = el?.closest('section.panel')?.id ?? (el?.closest('header') ? 'header' : null);
          const s = getComputedStyle(el);
          return { panel, body: el?.classList.contains('panel-body') ?? false, outline: `${s.outlineStyle} ${s.outlineWidth}` };
        });
        order.push(f.panel);
        if (f.panel === 'panel-ranked' && f.body) {
          ring = f.outline;
          break;
        }
      }
      assert.ok(ring, `the ranked table was reached by Tab: ${order.join(' ')}`);
      assert.match(ring, /^solid [2-9]/, 'a visible focus ring');
      // The header's controls come first, then the panels, one after the other.
      assert.equal(order[0], 'header');
      const firstPanel = order.findIndex((p) => p !== 'header');
      assert.ok(order.slice(firstPanel).every((p) => p !== 'header'), order.join(' '));
      const rows = await page.$$eval('#panel-ranked tbody tr', (trs) => trs.map((t) => Number(t.dataset.id)));
      const start = (await selection(page)).event;
      const i = rows.indexOf(start);
      assert.ok(i >= 0);
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction((e) => window.perfscape.store.get().event === e, rows[i + 1]);
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction((e) => window.perfscape.store.get().event === e, rows[i + 2]);
      await page.keyboard.press('ArrowUp');
      await page.waitForFunction((e) => window.perfscape.store.get().event === e, rows[i + 1]);
      assert.match(await page.textContent('#panel-ranked tr.selected'), new RegExp((await page.$eval('#panel-ranked tr.selected td.name', (t) => t.textContent)).replace(/[()*.]/g, '\\$&')));
      // Maximize with the keyboard, leave with Escape.
      await page.focus('#panel-ranked button.max');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => window.perfscape.store.get().focus === 'ranked');
      await page.keyboard.press('Escape');
      await page.waitForFunction(() => window.perfscape.store.get().focus === null);
      assert.ok(await page.isVisible('#panel-heatmap'));
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`${at}: every panel head keeps to one line (tools that do not fit in a ⋯ menu) and axis names are inside their charts`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      const heads = await page.$$eval('section.panel .panel-head', (hs) =>
        hs.filter((h) => h.offsetParent).map((h) => ({ panel: h.parentElement.id, height: h.getBoundingClientRect().height, crowded: h.parentElement.classList.contains('crowded') })),
      );
      assert.ok(heads.length >= 8, JSON.stringify(heads));
      for (const h of heads) assert.ok(h.height <= 34, `${h.panel} head is ${h.height}px high (one line is about 29px)`);
      // A crowded head's tools stay on its line (scrolling sideways), and "⋯" shows them all
      // in a menu under the head; Escape closes it.
      const crowded = heads.find((h) => h.crowded);
      if (crowded) {
        const tools = `#${crowded.panel} .panel-head .tools`;
        const box = (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, w: e.clientWidth, sw: e.scrollWidth }; });
        const head = await box(`#${crowded.panel} .panel-head`);
        const row = await box(tools);
        assert.ok(row.top >= head.top - 1 && row.bottom <= head.bottom + 1, 'the tools stay in the head');
        await page.click(`#${crowded.panel} .panel-head button.more`);
        const menu = await box(tools);
        assert.ok(menu.top >= head.bottom - 1, 'the menu opens under the head');
        assert.ok(menu.sw <= menu.w + 1, 'every tool shows in the menu');
        assert.ok((await box(`#${crowded.panel} .panel-head`)).bottom <= head.bottom + 1, 'the head did not grow');
        await page.keyboard.press('Escape');
        assert.deepEqual(await box(tools), row);
      }
      if (size.width === 1280) assert.ok(crowded, `at 1280 px some head has more tools than room: ${JSON.stringify(heads)}`);
      const names = await axisNames(page);
      assert.ok(names.length >= 3, JSON.stringify(names));
      const bad = names.filter((n) => !n.drawn || !n.inside);
      assert.deepEqual(bad, [], JSON.stringify(bad));
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`${at}: the dark theme redefines the colours, reaches the charts and is kept in the URL`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      const look = () =>
        page.evaluate(() => {
          const root = getComputedStyle(document.documentElement);
          const c = window.perfscape.charts.get('event-bars');
          const texts = c.getZr().storage.getDisplayList(true).filter((e) => (e.type === 'text' || e.type === 'tspan') && e.style?.text);
          const label = texts.find((t) => /threads, sorted/.test(t.style.text)) ?? texts[0];
          return {
            bg: root.getPropertyValue('--bg').trim(),
            ink: root.getPropertyValue('--ink').trim(),
            panel: root.getPropertyValue('--panel').trim(),
            body: getComputedStyle(document.body).backgroundColor,
            chartBg: c.getOption().backgroundColor,
            label: label.style.fill,
            theme: document.documentElement.dataset.theme,
          };
        });
      const light = await look();
      assert.equal(light.theme, 'light');
      assert.equal(light.chartBg, light.panel);
      await page.click('#theme-toggle');
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
      await page.waitForTimeout(300);
      const dark = await look();
      assert.notEqual(dark.bg, light.bg);
      assert.equal(dark.bg, '#0d1117');
      assert.equal(dark.chartBg, dark.panel, 'the chart is drawn on the dark panel colour');
      assert.equal(dark.label.toLowerCase(), dark.ink.toLowerCase(), 'axis text in the dark theme ink');
      assert.notEqual(dark.label, light.label);
      // The chart's pixels are dark too.
      const pix = await drawn(page, '#panel-event .chart >> nth=0');
      assert.ok(pix.ink > 0.9, JSON.stringify(pix));
      assert.match(page.url(), /theme=dark/);
      // Kept: the URL reopens it dark; a page without the key follows this browser's choice.
      const again = await open(s.br, page.url(), size);
      assert.equal(await again.page.evaluate(() => document.documentElement.dataset.theme), 'dark');
      await again.page.close();
      await page.click('#theme-toggle');
      await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
      assert.match(page.url(), /theme=light/);
      assert.equal((await look()).chartBg, light.panel);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

test('live replay: --wait-for-page holds at the first sample until the page connects; "replay from start" starts every page again from it', { timeout: 180000 }, async () => {
  // The run's 21 samples span about 1.4 s: at 5 times its pace, 0.3 s.
  const server = await serve(np8, ['--replay', '--speed', '5', '--wait-for-page']);
  const br = await browser();
  try {
    const origin = new URL(server.url);
    const token = origin.searchParams.get('token');
    const runInfo = () => fetch(`${origin.origin}/api/run?token=${token}`).then((r) => r.json());
    // No page yet: the replay wrote its first sample and waits (far longer than the whole replay).
    let info = await runInfo();
    for (let i = 0; i < 100 && info.status !== 'ok'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      info = await runInfo();
    }
    await new Promise((r) => setTimeout(r, 1500));
    info = await runInfo();
    assert.equal(info.samples, 1, `held at the first sample: ${JSON.stringify({ status: info.status, samples: info.samples, live: info.live })}`);
    assert.equal(info.live, true);
    assert.equal(info.replay, true);
    for (const size of SIZES) {
      const page = await br.newPage({ viewport: size });
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await page.goto(server.url);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      const trendLength = () => page.evaluate(() => window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0);
      // The trend follows the samples (after its own answer).
      const trendAt21 = () => page.waitForFunction(() => window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length === 21, null, { timeout: 30000 });
      const done = () => page.waitForFunction(() => /final state · 21 samples/.test(document.querySelector('#samplebar')?.textContent ?? ''), null, { timeout: 60000 });
      if (size === SIZES[0]) {
        // The first page saw the run from its first sample: the replay went on when it connected.
        await done();
        const counts = await page.evaluate(() => window.perfscapeLive.counts);
        assert.equal(counts[0], 1, `the page opened at the first sample: ${counts}`);
        assert.deepEqual([...counts].sort((a, b) => a - b), counts, `it only grew: ${counts}`);
        assert.equal(counts[counts.length - 1], 21);
        assert.ok((await page.evaluate(() => window.perfscapeLive.samples)) >= 20, 'the other samples were pushed to the page');
      } else {
        await done();
      }
      await trendAt21();
      assert.equal(await trendLength(), 21);
      // Again from the start: the count goes back to nothing and grows to the end again.
      assert.ok(await page.isVisible('#replay-restart'));
      const before = await page.evaluate(() => window.perfscapeLive.counts.length);
      await page.click('#replay-restart');
      await page.waitForFunction(() => window.perfscapeLive.restarts === 1, null, { timeout: 30000 });
      await page.waitForFunction((n) => window.perfscapeLive.counts.slice(n).includes(21), before, { timeout: 60000 });
      await done();
      const since = (await page.evaluate(() => window.perfscapeLive.counts)).slice(before);
      // (a refresh asked before the click may come in first, with the whole run)
      const k = since.indexOf(0);
      assert.ok(k >= 0 && since.slice(0, k).every((n) => n === 21), `restarted from nothing: ${since}`);
      const after = since.slice(k);
      assert.deepEqual([...after].sort((a, b) => a - b), after, `then it only grew: ${after}`);
      assert.equal(after[after.length - 1], 21);
      await trendAt21();
      assert.equal(await trendLength(), 21);
      assert.doesNotMatch(await page.textContent('#samplebar'), /● live/);
      assert.deepEqual(errors, []);
      await page.close();
    }
  } finally {
    await br.close();
    server.stop();
  }
});

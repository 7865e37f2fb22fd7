// Screenshots of the main page to look at (not a test): the 64-rank example, the np8 snapshot
// run and the np4 Chrome trace, at 1600×1000 and 1280×800, the viewport and the whole page.
// Run: `node tests/screenshots.mjs OUTDIR` (PERFSCAPE_BIN as for the browser tests); other runs
// with PERFSCAPE_SHOT_RUNS=name=path,name=path (only those are then taken); `name=A+B+C` serves
// A with B and C to compare (`perfscape serve A B C`).

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { browser, open, repo, serve, shared } from './harness.mjs';

const out = process.argv[2] ?? path.join(repo, 'target/screenshots');
mkdirSync(out, { recursive: true });
const extra = (process.env.PERFSCAPE_SHOT_RUNS ?? '')
  .split(',')
  .filter((s) => s.includes('='))
  .map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]);
const runs = extra.length
  ? Object.fromEntries(extra)
  : {
      np64: path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix'),
      np8snapshot: path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot'),
      np4trace: path.join(shared, 'corpus/tau-real/mpi-stencil-np4-trace/trace.chrome.json'),
    };
const sizes = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

const br = await browser();
try {
  for (const [name, run] of Object.entries(runs)) {
    const [main, ...compared] = run.split('+');
    const server = await serve(main, compared);
    try {
      for (const size of sizes) {
        const { page, errors } = await open(br, server.url, size);
        await page.waitForTimeout(1500);
        const base = path.join(out, `${name}-${size.width}x${size.height}`);
        await page.screenshot({ path: `${base}.png` });
        await page.screenshot({ path: `${base}-full.png`, fullPage: true });
        console.log(`${base}.png${errors.length ? `  console errors: ${errors.join(' | ')}` : ''}`);
        await page.close();
      }
    } finally {
      server.stop();
    }
  }
} finally {
  await br.close();
}

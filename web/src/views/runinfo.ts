// Run information: metadata, threads, metrics, warnings from loading.

import { api } from '../client';
import { esc, metricLabel } from '../format';
import { PanelView } from '../panel';

/** What was loaded: files, threads, metrics, events, problems, metadata. */
export class RunInfoView extends PanelView {
  private done = false;

  update(): void {
    if (this.done) return;
    this.done = true;
    const r = this.ctx.run;
    const list = (title: string, items: string[], cls = '') =>
      items.length ? `<h3>${title} (${items.length})</h3><ul class="${cls}">${items.slice(0, 200).map((i) => `<li>${esc(i)}</li>`).join('')}</ul>` : '';
    const meta = r.metadata.map((m) => `<dt>${esc(m.name)}</dt><dd>${esc(m.value)}</dd>`).join('');
    const varying = r.varying_metadata
      .map((m) => `<dt>${esc(m.name)}</dt><dd>${esc(m.first_value)} <small>(on ${esc(m.first_thread)}; differs on the ${m.threads.toLocaleString('en-US')} threads that have it)</small></dd>`)
      .join('');
    this.body.innerHTML = `<div class="scroll runinfo">
      <dl class="kv">
        <dt>Run</dt><dd>${esc(r.path)}</dd>
        <dt>Format</dt><dd>${esc(r.format)}, ${r.files_read.toLocaleString('en-US')} files, ${(r.bytes_read / 1e6).toFixed(1)} MB</dd>
        <dt>Threads</dt><dd>${r.threads.toLocaleString('en-US')} (${r.nodes.toLocaleString('en-US')} nodes/ranks)</dd>
        <dt>Metrics</dt><dd>${r.metrics.map((m) => esc(metricLabel(m))).join(', ')}</dd>
        <dt>Events</dt><dd>${r.flat_events} flat, ${r.callpath_events} callpaths, ${r.sample_events} sampled lines, ${r.user_events} user events</dd>
        <dt>Load</dt><dd class="${r.bad_files.length ? 'error' : ''}">${r.bad_files.length ? `${r.bad_files.length} file(s) not loaded` : 'every file loaded'}; ${r.warnings.length} warning(s)</dd>
      </dl>
      ${r.store ? '<div class="store-runs note"><h3>Store</h3><p>Reading the store…</p></div>' : ''}
      <div class="note">${list('Files not loaded', r.bad_files, 'error')}${list('Warnings', r.warnings)}${list('Notes', r.notes)}</div>
      <h3 class="note">Metadata</h3><dl class="kv">${meta}${varying}</dl>
    </div>`;
    if (r.store) void this.showStore();
  }

  /** The runs of the store served with `--store DIR` (`/api/store`), as a table. */
  private async showStore(): Promise<void> {
    const box = this.body.querySelector<HTMLElement>('.store-runs');
    if (!box) return;
    try {
      const st = await api.store();
      const items = st.runs
        .map((r) => {
          const tags = Object.entries(r.tags)
            .map(([k, v]) => `${esc(k)}=${esc(v ?? '')}`)
            .join(', ');
          const added = new Date(r.added_unix_s * 1000).toISOString().slice(0, 16).replace('T', ' ');
          return `<li title="${esc(r.source)}"><b>run ${r.run}</b> ${esc(r.name)}<br><small>${esc(r.format)}, ${r.threads.toLocaleString('en-US')} threads${tags ? `, ${tags}` : ''}; added ${added} UTC</small></li>`;
        })
        .join('');
      box.innerHTML = `<h3>Store ${esc(st.dir)} (${st.runs.length} run${st.runs.length === 1 ? '' : 's'})</h3>
        <ul class="store-list">${items}</ul>
        <p><small>SQL across them: <code>perfscape sql --store ${esc(st.dir)} "SELECT …"</code>, or <code>POST /api/sql</code> with <code>"over": "store"</code>.</small></p>`;
    } catch (e) {
      box.innerHTML = `<h3>Store</h3><p class="error">${esc(String(e))}</p>`;
    }
  }
}

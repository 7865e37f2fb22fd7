// Run information: metadata, threads, metrics, warnings from loading.

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
      <div class="note">${list('Files not loaded', r.bad_files, 'error')}${list('Warnings', r.warnings)}${list('Notes', r.notes)}</div>
      <h3 class="note">Metadata</h3><dl class="kv">${meta}${varying}</dl>
    </div>`;
  }
}

// Findings: what is wrong with the run, ranked by the time it costs — stragglers, load
// imbalance of useful work, communication-bound threads, the POP efficiencies, hot spots, and
// for a trace its wait states (late sender, late receiver, wait at N×N) — each
// with its evidence and a "show" link that selects its event and thread and brings the view
// that shows it into sight. The POP metrics head the list with the categories counted as useful.

import type { FindingJson } from '../api/FindingJson';
import type { FindingsResponse } from '../api/FindingsResponse';
import { api } from '../client';
import { esc, value } from '../format';
import { type Panel, PanelView, SUPERSEDED } from '../panel';
import { type Key, type State, store, touched } from '../state';

const KIND_LABEL: Record<FindingJson['kind'], string> = {
  straggler: 'straggler',
  imbalance: 'load imbalance',
  communication_bound: 'communication-bound',
  efficiency: 'efficiency',
  hot_spot: 'hot spot',
  late_sender: 'late sender',
  late_receiver: 'late receiver',
  wait_nxn: 'wait at N×N',
};

/** The ranked findings of the run. */
export class FindingsView extends PanelView {
  private list: HTMLDivElement;
  private data: FindingsResponse | null = null;

  constructor(panel: Panel) {
    super(panel);
    this.list = this.div('scroll findings');
    this.list.addEventListener('click', (e) => {
      const a = (e.target as HTMLElement).closest<HTMLElement>('[data-finding]');
      if (!a || !this.data) return;
      const f = this.data.findings[Number(a.dataset.finding)];
      if (f) this.show(f);
    });
  }

  /** Selects the finding's event and thread and scrolls its view into sight. */
  private show(f: FindingJson): void {
    const patch: Partial<State> = {};
    if (f.event !== null) patch.event = f.event;
    if (f.thread !== null) patch.thread = f.thread;
    store.set(patch);
    const target = document.getElementById(`panel-${f.view}`);
    if (target) {
      target.scrollIntoView({ block: 'nearest', behavior: 'auto' });
      target.classList.remove('flash');
      void target.offsetWidth;
      target.classList.add('flash');
    }
  }

  async update(s: State, changed: Set<Key>): Promise<void> {
    if (touched(changed, 'metric', 'sample', 'mode') || !this.data) {
      const d = await this.load((signal) => api.findings(s, signal));
      if (d === SUPERSEDED) return;
      this.data = d;
    }
    this.draw(this.state());
  }

  private draw(s: State): void {
    const d = this.data;
    if (!d) return;
    const u = d.unit;
    const eff = (x: number) => (x >= 0.1 ? x.toFixed(2) : x.toPrecision(2));
    const pop = d.pop
      ? `<div class="pop"><b>POP efficiencies</b>: parallel ${eff(d.pop.parallel_efficiency)} = load balance ${eff(d.pop.load_balance)} × communication ${eff(d.pop.communication_efficiency)}
         <br><small>useful work: ${esc(d.pop.useful_categories.join(', ') || 'none')} · runtime ${value(d.pop.runtime, u)}</small></div>`
      : '<div class="pop"><small>No POP efficiencies: the metric does not add up or no time counts as useful work.</small></div>';
    const items = d.findings
      .map((f, i) => {
        const selected = (f.event === null || f.event === s.event) && (f.thread === null || f.thread === s.thread) ? ' selected' : '';
        const cost = f.kind === 'hot_spot' ? `${value(f.cost, u)} per thread` : `${value(f.cost, u)} lost`;
        return `<li class="finding kind-${f.kind}${selected}">
          <div class="finding-head"><span class="badge">${esc(KIND_LABEL[f.kind])}</span>
            <span class="cost">${cost} · ${f.cost_percent.toFixed(f.cost_percent < 1 ? 3 : 1)}%</span>
            <button class="show" data-finding="${i}" title="select it and show the ${esc(f.view)} view">show</button></div>
          <div class="finding-title">${esc(f.title)}</div>
          <ul class="evidence">${f.evidence.map((e) => `<li>${esc(e)}</li>`).join('')}</ul>
        </li>`;
      })
      .join('');
    this.list.innerHTML = `${pop}${d.findings.length ? `<ol class="finding-list">${items}</ol>` : '<p class="note">Nothing found above the thresholds.</p>'}
      <p class="note"><small>Percent of the median thread total (${value(d.median_thread_total, u)}). Thresholds: <code>perfscape findings --help</code>.</small></p>`;
  }
}

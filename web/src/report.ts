// A self-contained report (`perfscape report RUN -o report.html`): the page opened from a file,
// with no server. The answers its dashboards ask for were recorded into the page as the JSON
// element `#perfscape-report` (crates/perfscape-server/src/report.rs); the client reads them
// instead of fetching. What was not recorded is said in its panel.

import { PARAM_KEYS, type ParamKey, usesPlaceholder } from './placeholders';

/** One recorded answer: HTTP status and JSON body. */
interface Recorded {
  status: number;
  body: unknown;
}

/** What a report holds (`ReportData` in report.rs). */
export interface Report {
  source: string;
  generated: string;
  answers: Record<string, Recorded>;
  cut: string[];
}

/** The report this page is, or null when a server serves it. */
export const REPORT: Report | null = (() => {
  const el = document.getElementById('perfscape-report');
  if (!el?.textContent) return null;
  try {
    return JSON.parse(el.textContent) as Report;
  } catch (e) {
    console.error('perfscape: the report data cannot be read', e);
    return null;
  }
})();


/** The key of an SQL answer (report.rs `sql_key`): the query, then per placeholder the value
 * bound when the query uses it (JSON), else nothing, one line each. */
export function sqlKey(query: string, params: Partial<Record<ParamKey, unknown>> | undefined): string {
  let key = `sql\n${query}\n`;
  for (const name of PARAM_KEYS) {
    if (usesPlaceholder(query, name)) key += JSON.stringify(params?.[name] ?? null);
    key += '\n';
  }
  return key;
}

/** The recorded answer of `key` (a GET's path and query after `/api/`, or an `sqlKey`): its
 * status and body, or a 404 saying the report does not hold it. */
export function recorded(report: Report, key: string): Recorded {
  return (
    report.answers[key] ?? {
      status: 404,
      body: { error: 'not in this report: this view or selection was not recorded (open the run with perfscape serve to see it)' },
    }
  );
}

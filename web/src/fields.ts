// Kinds of state fields: how one key of the page state is parsed from the URL, written back,
// checked when it comes from another browser (shared sessions), offered in a <select>, and
// whether it fits the loaded run. The schema (./schema.ts) is a table of these.

import type { RunInfo } from './api/RunInfo';

/** What a field may be checked against once the run is known. */
export interface Env {
  /** The loaded run. */
  run: RunInfo;
  /** Ids of the panels shown for this run. */
  panels: readonly string[];
}

/** One allowed value of an enum field and how a `<select>` names it. */
export interface Choice<T> {
  value: T;
  label: string;
}

/** How a field is kept: in the URL and in a shared session (both by default), and how its
 * control is labelled. */
export interface Keep {
  /** Mirrored in the URL (default true). */
  url?: boolean;
  /** Relayed to the other browsers of a shared session (default true). */
  shared?: boolean;
  /** Label of the field's control (`Value`, `bins`, ...). */
  label?: string;
  /** Tooltip of the field's control. */
  title?: string;
}

/** One key of the page state. */
export interface Field<T> {
  readonly default: T;
  /** Enum fields: the allowed values in the order a `<select>` offers them. */
  readonly choices?: readonly Choice<T>[];
  /** Integer fields: the accepted range. */
  readonly min?: number;
  readonly max?: number;
  readonly url: boolean;
  readonly shared: boolean;
  readonly label?: string;
  readonly title?: string;
  /** The value of a URL parameter, or undefined when the text is not a valid value. */
  parse(text: string): T | undefined;
  /** The URL parameter text of a value (`parse(format(v))` gives `v` back). */
  format(v: T): string;
  /** True when `v` (JSON from another browser) is a valid value. */
  valid(v: unknown): v is T;
  /** True when the value makes sense for the loaded run (default: always). */
  fits(v: T, env: Env): boolean;
}

type Fits<T> = (v: T, env: Env) => boolean;

function field<T>(base: Omit<Field<T>, 'url' | 'shared' | 'fits' | 'label' | 'title'>, keep: Keep, fits?: Fits<T>): Field<T> {
  return { ...base, url: keep.url ?? true, shared: keep.shared ?? true, label: keep.label, title: keep.title, fits: fits ?? (() => true) };
}

/** An enum of strings: `choice({ a: 'label of a', b: 'label of b' }, 'a')`; the object's order
 * is the order of the `<select>`. */
export function choice<const V extends string>(labels: Record<V, string>, def: NoInfer<V>, keep: Keep = {}, fits?: Fits<V>): EnumField<V> {
  const choices = (Object.keys(labels) as V[]).map((value) => ({ value, label: labels[value] }));
  const valid = (v: unknown): v is V => typeof v === 'string' && choices.some((c) => c.value === v);
  return { ...field<V>({ default: def, choices, parse: (t) => (valid(t) ? t : undefined), format: (v) => v, valid }, keep, fits), choices };
}

/** An enum of numbers (terrain resolutions, ...), labelled by their value. */
export function numberChoice<const V extends number>(values: readonly V[], def: NoInfer<V>, keep: Keep = {}): EnumField<V> {
  const choices = values.map((value) => ({ value, label: String(value) }));
  const valid = (v: unknown): v is V => typeof v === 'number' && (values as readonly number[]).includes(v);
  const parse = (t: string) => (t.trim() !== '' && valid(Number(t)) ? (Number(t) as V) : undefined);
  return { ...field<V>({ default: def, choices, parse, format: String, valid }, keep), choices };
}

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function intOf(t: string, min: number, max: number): number | undefined {
  if (!/^\s*-?\d+\s*$/.test(t)) return undefined;
  const n = Number(t);
  return isInt(n, min, max) ? n : undefined;
}

/** An integer in `[min, max]`. */
export function int(def: number, range: { min: number; max?: number }, keep: Keep = {}, fits?: Fits<number>): Field<number> {
  const { min } = range;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  return field<number>({ default: def, min, max, parse: (t) => intOf(t, min, max), format: String, valid: (v): v is number => isInt(v, min, max) }, keep, fits);
}

/** An integer `>= 0` or null (nothing chosen: the default). */
export function optionalIndex(keep: Keep = {}, fits?: Fits<number | null>): Field<number | null> {
  const max = Number.MAX_SAFE_INTEGER;
  return field<number | null>(
    {
      default: null,
      min: 0,
      max,
      parse: (t) => intOf(t, 0, max),
      format: (v) => (v === null ? '' : String(v)),
      valid: (v): v is number | null => v === null || isInt(v, 0, max),
    },
    keep,
    fits,
  );
}

/** Free text (a filter); `pattern` restricts it. */
export function text(def: string, keep: Keep = {}, pattern?: RegExp): Field<string> {
  const valid = (v: unknown): v is string => typeof v === 'string' && (!pattern || pattern.test(v));
  return field<string>({ default: def, parse: (t) => (valid(t) ? t : undefined), format: (v) => v, valid }, keep);
}

/** Text matching `pattern`, or null (nothing chosen). */
export function optionalText(pattern: RegExp, keep: Keep = {}, fits?: Fits<string | null>): Field<string | null> {
  const ok = (v: unknown): v is string => typeof v === 'string' && pattern.test(v);
  return field<string | null>({ default: null, parse: (t) => (ok(t) ? t : undefined), format: (v) => v ?? '', valid: (v): v is string | null => v === null || ok(v) }, keep, fits);
}

/** A yes/no switch, `1`/`0` in the URL (`true`/`false` read too). */
export function flag(def: boolean, keep: Keep = {}): Field<boolean> {
  const parse = (t: string) => (t === '1' || t === 'true' ? true : t === '0' || t === 'false' ? false : undefined);
  return field<boolean>({ default: def, parse, format: (v) => (v ? '1' : '0'), valid: (v): v is boolean => typeof v === 'boolean' }, keep);
}

/** A field whose allowed values are listed (its control is a `<select>`). */
export interface EnumField<T> extends Field<T> {
  readonly choices: readonly Choice<T>[];
}

/** The value type of a field. */
export type ValueOf<F> = F extends Field<infer T> ? T : never;

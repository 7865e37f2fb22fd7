// Controls bound to a key of the state: a `<select>` offers exactly the schema's allowed values
// (labelled by the schema), number inputs take the schema's range, and every control follows
// the store (a change from another view or another browser shows at once). Each control
// carries `data-key` (the state key it sets).

import type { Choice, Env, Field } from './fields';
import { type EnumKey, FIELDS, type Key, type KeyOf, type State } from './schema';
import { store } from './state';

/** Something that frees what a control holds when it goes (a panel). */
export interface Owner {
  /** Calls `dispose` when the owner is disposed. */
  own(dispose: () => void): void;
}

/** Options of a bound control. */
export interface ControlOptions<K extends Key> {
  /** Text before the control (default: the schema's label; '' for none). */
  label?: string;
  /** Tooltip (default: the schema's title). */
  title?: string;
  /** Other keys to set together with a new value (e.g. reset the heat-map region). */
  also?: (v: State[K], s: State) => Partial<State>;
  /** Shown only while this holds. */
  visible?: (s: State) => boolean;
  /** Freed with this owner. */
  owner?: Owner;
}

/** Options of a bound `<select>`. */
export interface SelectOptions<K extends Key> extends ControlOptions<K> {
  /** Values offered but not selectable now (e.g. needs another setting first). */
  disabled?: (v: State[K], s: State) => boolean;
  /** The run: values that do not fit it are offered disabled. */
  env?: Env;
}

function wrap<K extends Key>(key: K, control: HTMLElement, o: ControlOptions<K>, refresh: (s: State) => void): HTMLElement {
  const f = FIELDS[key] as Field<unknown>;
  control.dataset.key = key;
  const title = o.title ?? f.title;
  if (title) control.title = title;
  const label = o.label ?? f.label ?? '';
  let outer = control;
  if (label) {
    outer = document.createElement('label');
    outer.className = 'ctl';
    outer.append(`${label} `, control);
  }
  const sync = (s: State) => {
    refresh(s);
    if (o.visible) outer.style.display = o.visible(s) ? '' : 'none';
  };
  sync(store.get());
  const stop = store.subscribe((s) => sync(s));
  o.owner?.own(stop);
  return outer;
}

function commit<K extends Key>(key: K, v: State[K], o: ControlOptions<K>): void {
  const s = store.get();
  store.set({ ...(o.also?.(v, s) ?? {}), [key]: v } as Partial<State>);
}

function fillSelect<T>(sel: HTMLSelectElement, f: Field<T>, choices: readonly Choice<T>[]): void {
  sel.innerHTML = '';
  for (const c of choices) sel.add(new Option(c.label, f.format(c.value)));
}

/** A `<select>` of an enum key: exactly the schema's values, in its order, with its labels. */
export function selectFor<K extends EnumKey>(key: K, o: SelectOptions<K> = {}): HTMLElement {
  const f = FIELDS[key] as unknown as Field<State[K]>;
  return choiceSelect(key, f.choices ?? [], o);
}

/** A `<select>` of a key whose values come from the run (metrics, events): `choices`. */
export function dynamicSelect<K extends Key>(key: K, choices: readonly Choice<State[K]>[], o: SelectOptions<K> = {}): HTMLElement {
  const el = choiceSelect(key, choices, o);
  (el.querySelector('select') ?? (el as HTMLSelectElement)).dataset.dynamic = '1';
  return el;
}

function choiceSelect<K extends Key>(key: K, choices: readonly Choice<State[K]>[], o: SelectOptions<K>): HTMLElement {
  const f = FIELDS[key] as unknown as Field<State[K]>;
  const sel = document.createElement('select');
  fillSelect(sel, f, choices);
  sel.addEventListener('change', () => {
    // '' is the option of "nothing chosen" (null) of an optional key.
    const v = sel.value === '' && f.valid(null) ? (null as State[K]) : f.parse(sel.value);
    if (v !== undefined) commit(key, v, o);
  });
  return wrap(key, sel, o, (s) => {
    sel.value = f.format(s[key]);
    choices.forEach((c, i) => {
      sel.options[i].disabled = (o.env !== undefined && !f.fits(c.value, o.env)) || (o.disabled?.(c.value, s) ?? false);
    });
  });
}

/** A number input of an integer key: the schema's range; out-of-range entries are clamped. */
export function numberFor<K extends KeyOf<number>>(key: K, o: ControlOptions<K> = {}, type: 'number' | 'range' = 'number'): HTMLElement {
  const f = FIELDS[key] as unknown as Field<number>;
  const input = document.createElement('input');
  input.type = type;
  if (f.min !== undefined) input.min = String(f.min);
  if (f.max !== undefined && f.max < Number.MAX_SAFE_INTEGER) input.max = String(f.max);
  input.addEventListener('change', () => {
    const n = Math.round(Number(input.value));
    if (input.value.trim() === '' || !Number.isFinite(n)) {
      input.value = String(store.get()[key]);
      return;
    }
    const v = Math.max(f.min ?? -Infinity, Math.min(f.max ?? Infinity, n));
    input.value = String(v);
    commit(key, v as State[K], o);
  });
  return wrap(key, input, o, (s) => {
    if (document.activeElement !== input) input.value = String(s[key]);
  });
}

/** A checkbox of a yes/no key. */
export function checkboxFor<K extends KeyOf<boolean>>(key: K, o: ControlOptions<K> = {}): HTMLElement {
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.addEventListener('change', () => commit(key, box.checked as State[K], o));
  const label = o.label ?? FIELDS[key].label ?? '';
  const el = wrap(key, box, { ...o, label: '' }, (s) => {
    box.checked = s[key] as boolean;
  });
  const outer = document.createElement('label');
  outer.className = 'ctl';
  outer.append(el, ` ${label}`);
  return outer;
}

/** A search box of a text key, set as one types. */
export function searchFor<K extends KeyOf<string>>(key: K, o: ControlOptions<K> = {}): HTMLElement {
  const f = FIELDS[key] as unknown as Field<string>;
  const input = document.createElement('input');
  input.type = 'search';
  if (f.title) input.placeholder = f.title;
  input.addEventListener('input', () => {
    const v = f.parse(input.value);
    if (v !== undefined) commit(key, v as State[K], o);
  });
  return wrap(key, input, o, (s) => {
    if (input.value !== s[key]) input.value = s[key] as string;
  });
}

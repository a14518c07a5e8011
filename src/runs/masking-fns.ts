// Secret values a run received are masked as `***` in what it records (trace lines, result, error), as
// GitHub Actions masks logs: each value, each of its lines, its base64 (standard and URL-safe, at the three
// alignments it can take inside longer base64), its URL encoding and its JSON escaping. Output arrives as
// events that a value may be split across: an event whose end could begin a value waits for the next one
// of its stream, and a value found across the two is masked in both.

const MASK = '***';
/** Shorter pieces (a line of a multi-line value, a base64 fragment) would mask ordinary text. */
const MIN_FORM = 4;
/** How much of a value's start must show at the end of an event to hold it back for the next one. */
const MIN_HELD_PREFIX = 3;

/** The base64 of `value` as it shows inside longer base64, for each of the 3 byte alignments. */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value);
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Characters touched by the padding before or the unknown bytes after are left out.
    const start = Math.ceil((offset * 4) / 3);
    const end = Math.floor(((offset + bytes.length) * 4) / 3);
    const stable = encoded.slice(start, offset === 0 && bytes.length % 3 === 0 ? encoded.length : end);
    forms.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  forms.push(bytes.toString('base64'), bytes.toString('base64url'));
  return forms;
}

export function maskForms(values: string[]): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    for (const form of [value, ...value.split(/\r?\n/), ...base64Forms(value), encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) {
      if (form.length >= MIN_FORM) forms.add(form);
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Marks every character of `text` that lies in an occurrence of a form. */
function marksOf(text: string, forms: string[]): Uint8Array {
  const marks = new Uint8Array(text.length);
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) marks.fill(1, at, at + form.length);
  }
  return marks;
}

/** `text` with each run of marked characters replaced by one mask. */
function render(text: string, marks: Uint8Array): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!marks[i]) out += text[i];
    else if (i === 0 || !marks[i - 1]) out += MASK;
  }
  return out;
}

export interface Masker {
  text(text: string): string;
  /** A JSON value with every string in it masked (a result). */
  value<T>(value: T): T;
  /** One stream of output events: what may be recorded now, in order; `end` gives what was held back. */
  stream(): { push(text: string): string[]; end(): string[] };
}

export function createMasker(values: string[]): Masker {
  const forms = maskForms(values);
  const mask = (text: string) => (forms.length ? render(text, marksOf(text, forms)) : text);
  // Could the end of `text` be the start of a form that the next event completes?
  const mayContinue = (text: string) =>
    forms.some((form) => {
      for (let n = Math.min(form.length - 1, text.length); n >= MIN_HELD_PREFIX; n--) if (text.endsWith(form.slice(0, n))) return true;
      return false;
    });
  const value = <T>(input: T): T => {
    if (typeof input === 'string') return mask(input) as T;
    if (Array.isArray(input)) return input.map(value) as T;
    if (input && typeof input === 'object') return Object.fromEntries(Object.entries(input).map(([key, item]) => [mask(key), value(item)])) as T;
    return input;
  };

  return {
    text: mask,
    value,
    stream() {
      let held: { text: string; marks: Uint8Array } | null = null;
      return {
        push(text) {
          if (!forms.length) return [text];
          const out: string[] = [];
          const marks = marksOf(text, forms);
          if (held) {
            const across = marksOf(held.text + text, forms);
            for (let i = 0; i < held.text.length; i++) held.marks[i] |= across[i];
            for (let i = 0; i < text.length; i++) marks[i] |= across[held.text.length + i];
            out.push(render(held.text, held.marks));
            held = null;
          }
          if (mayContinue(text)) held = { text, marks };
          else out.push(render(text, marks));
          return out;
        },
        end() {
          const out = held ? [render(held.text, held.marks)] : [];
          held = null;
          return out;
        },
      };
    },
  };
}

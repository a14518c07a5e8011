// What the CLI prints: tables for people (colour only on a terminal), JSON for scripts (`--json`), and
// errors on stderr. One place, so every command prints the same way.
import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './errors';

const tty = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const paint = (code: number) => (text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
export const dim = paint(2);
export const bold = paint(1);
const STATE_COLOURS: Record<string, (text: string) => string> = { succeeded: paint(32), failed: paint(31), timed_out: paint(31), expired: paint(33), canceled: paint(33), running: paint(36) };
export const state = (value: string) => (STATE_COLOURS[value] ?? ((text: string) => text))(value);

export interface Printer {
  json: boolean;
  /** A value: as JSON with --json, else as `human` says. */
  value(value: unknown, human: () => void): void;
  /** Rows with --json as an array, else as an aligned table of `columns`. */
  table<T>(rows: T[], columns: [string, (row: T) => string][]): void;
  line(text: string): void;
}

export function printer(json: boolean): Printer {
  const out = (text: string) => void process.stdout.write(`${text}\n`);
  return {
    json,
    value(value, human) {
      if (json) out(JSON.stringify(value, null, 2));
      else human();
    },
    table(rows, columns) {
      if (json) return out(JSON.stringify(rows, null, 2));
      const cells = rows.map((row) => columns.map(([, cell]) => cell(row) ?? ''));
      // eslint-disable-next-line no-control-regex
      const width = (text: string) => text.replace(/\u001b\[\d+m/g, '').length;
      const widths = columns.map(([title], i) => Math.max(title.length, ...cells.map((row) => width(row[i]))));
      const pad = (text: string, i: number) => text + ' '.repeat(Math.max(0, widths[i] - width(text)));
      out(dim(columns.map(([title], i) => pad(title.toUpperCase(), i)).join('  ')));
      for (const row of cells) out(row.map(pad).join('  ').trimEnd());
      if (rows.length === 0) out(dim('(none)'));
    },
    line: (text) => (json ? undefined : out(text)),
  };
}

/** `@file.json`, `-` (stdin) or inline JSON, parsed; a problem is a usage error naming where. */
export function jsonArgument(text: string, what: string): unknown {
  let raw = text;
  try {
    if (text === '-') raw = readFileSync(0, 'utf8');
    else if (text.startsWith('@')) raw = readFileSync(text.slice(1), 'utf8');
  } catch (err) {
    throw new CliError(`Cannot read ${what} from ${text.slice(1)}: ${(err as Error).message}`, EXIT.usage);
  }
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new CliError(`${what} is not JSON: ${(err as Error).message}`, EXIT.usage);
  }
}

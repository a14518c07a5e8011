// CEL's cost estimate (cel-fns.ts) counts the calls an expression makes, not what one call does, and a
// string function reads its whole string: `payload.items.all(i, size(payload.body + payload.body) > 0)`
// passed the estimate and took 92 s on a 900 KB body. These replace the library's string overloads (same
// names and signatures, so they take their place) with the same results, each charged to the evaluation's
// work meter (lib/work-meter.ts) for the characters it reads. `matches()` is charged in regex.ts.
import type * as CelLibrary from '@bufbuild/cel';
import { charge } from '../lib/work-meter';

/** `this` and the arguments, as the library's own overloads take them. */
type Str = string;

export function meteredStringFuncs(cel: typeof CelLibrary): CelLibrary.CelFunc[] {
  const { BOOL, INT, STRING } = cel.CelScalar;
  const LIST = cel.listType(cel.CelScalar.DYN);
  // size() counts code points, as CEL defines a string's size.
  const size = (text: Str) => (charge(text.length), BigInt([...text].length));
  return [
    cel.celFunc('size', [STRING], INT, size),
    cel.celMethod('size', STRING, [], INT, function (this: Str) {
      return size(this);
    }),
    cel.celMethod('contains', STRING, [STRING], BOOL, function (this: Str, part: Str) {
      charge(this.length + part.length);
      return this.includes(part);
    }),
    cel.celMethod('startsWith', STRING, [STRING], BOOL, function (this: Str, part: Str) {
      charge(part.length);
      return this.startsWith(part);
    }),
    cel.celMethod('endsWith', STRING, [STRING], BOOL, function (this: Str, part: Str) {
      charge(part.length);
      return this.endsWith(part);
    }),
    cel.celFunc('_+_', [STRING, STRING], STRING, (left: Str, right: Str) => (charge(left.length + right.length), left + right)),
    cel.celFunc('_+_', [LIST, LIST], LIST, (left, right) => (charge(left.size + right.size), cel.celListConcat(left, right))),
  ];
}

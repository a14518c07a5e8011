// Masking a run's secret values: every form a value can take in output, a value split across two events
// of one stream, and nothing masked that is not a secret.
import { createMasker, maskForms } from '../../src/runs/masking-fns';

const SECRET = 'ghp_s3cr3tV4lue/with+chars=';

describe('one text', () => {
  const masker = createMasker([SECRET, 'line one\nline two']);

  it.each([
    ['the value', `token ${SECRET} used`, 'token *** used'],
    ['its base64', `b64 ${Buffer.from(SECRET).toString('base64')}`, 'b64 ***'],
    ['its URL-safe base64', `b64 ${Buffer.from(SECRET).toString('base64url')}`, 'b64 ***'],
    ['its URL encoding', `https://x.test/?t=${encodeURIComponent(SECRET)}`, 'https://x.test/?t=***'],
    ['its JSON escaping', JSON.stringify({ t: 'line one\nline two' }), '{"t":"***"}'],
    ['each line of a multi-line value', 'line two was printed', '*** was printed'],
    ['two values side by side', `${SECRET}${SECRET}`, '***'],
  ])('masks %s', (_label, text, masked) => {
    expect(masker.text(text)).toBe(masked);
  });

  it.each([1, 2, 5])('masks its base64 inside longer base64, %i bytes in', (before) => {
    const encoded = Buffer.concat([Buffer.alloc(before, 0x41), Buffer.from(SECRET), Buffer.from('tail bytes')]).toString('base64');
    const masked = masker.text(encoded);
    expect(masked).toContain('***');
    // All of the value's base64 but the characters it shares with its neighbours is gone.
    expect(encoded.length - masked.length + 3).toBeGreaterThanOrEqual(Math.floor((SECRET.length * 4) / 3) - 2);
  });

  it('leaves text without a secret alone, and masks the strings of a result, keys too', () => {
    expect(masker.text('nothing to see')).toBe('nothing to see');
    expect(masker.value({ summary: `used ${SECRET}`, [SECRET]: [1, `x${SECRET}`], n: 3 })).toEqual({ summary: 'used ***', '***': [1, 'x***'], n: 3 });
  });

  it('keeps forms of 4 characters or more: a short line of a value does not blank ordinary text', () => {
    expect(maskForms(['abc\nlonger line'])).not.toContain('abc');
  });
});

describe('a stream of output events', () => {
  it('masks a value split across two events, in both', () => {
    const stream = createMasker([SECRET]).stream();
    expect(stream.push(`first ${SECRET.slice(0, 10)}`)).toEqual([]); // held: it may continue
    expect(stream.push(`${SECRET.slice(10)} rest`)).toEqual(['first ***', '*** rest']);
    expect(stream.end()).toEqual([]);
  });

  it('gives back a held event that did not continue the value, unchanged, and at the end', () => {
    const stream = createMasker([SECRET]).stream();
    expect(stream.push('ends with ghp_')).toEqual([]);
    expect(stream.push('something else')).toEqual(['ends with ghp_', 'something else']);
    expect(stream.push('last ghp_s3')).toEqual([]);
    expect(stream.end()).toEqual(['last ghp_s3']);
  });

  it('holds nothing back when there are no secrets', () => {
    const stream = createMasker([]).stream();
    expect(stream.push('ghp_')).toEqual(['ghp_']);
  });
});

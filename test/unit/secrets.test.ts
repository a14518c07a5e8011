import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/lib/secrets';

describe('the secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, and seals the same secret differently each time', () => {
    const sealed = box.seal('whsec_top secret');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('secret');
    expect(box.open(sealed)).toBe('whsec_top secret');
    expect(box.seal('whsec_top secret')).not.toBe(sealed);
  });

  it('refuses a changed ciphertext and another key', () => {
    const sealed = box.seal('value');
    const [version, iv, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(() => box.open([version, iv, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
    expect(() => box.open('plain text')).toThrow();
  });
});

// Secrets stored at rest (signing secrets, provider tokens): AES-256-GCM under a key derived from
// FLOWS_SECRET_KEY for this purpose only. A sealed value is `v1.<iv>.<ciphertext and tag>` (base64url),
// so that a later key or scheme can be told apart.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './keys';

/** `whsec_` and 32 random bytes in base64: the Standard Webhooks form, usable as a plain HMAC key too. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * Seals with the current key; opens with it or, while secrets are being re-sealed after a key change, with
 * one of the previous keys (FLOWS_SECRET_KEY_PREVIOUS).
 */
export function createSecretBox(secretKey: Buffer, previousKeys: Buffer[] = []): SecretBox {
  const key = deriveKey(secretKey, 'stored secrets');
  const keys = [key, ...previousKeys.map((previous) => deriveKey(previous, 'stored secrets'))];
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed) {
      const [version, iv, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !body) throw new Error('not a sealed secret');
      const bytes = Buffer.from(body, 'base64url');
      for (const candidate of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', candidate, Buffer.from(iv, 'base64url'));
          decipher.setAuthTag(bytes.subarray(bytes.length - 16));
          return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
        } catch {
          // another key, or tampered: the next candidate, then the refusal below
        }
      }
      throw new Error('the sealed secret does not open with the configured keys');
    },
  };
}

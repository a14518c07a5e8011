// Every key derives from the one configured secret (FLOWS_SECRET_KEY), one per purpose, so that all
// instances sharing the secret share the keys and nothing else needs distributing.
import { createECDH, hkdfSync } from 'node:crypto';

export function deriveKey(secretKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), `flows ${purpose}`, 32));
}

export interface EcPrivateJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  d: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

/** The authorization server's ES256 signing key. (32 random bytes exceed the P-256 order with odds of 2^-32.) */
export function signingJwk(secretKey: Buffer): EcPrivateJwk {
  const d = deriveKey(secretKey, 'oauth signing key');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 0x04 ‖ x ‖ y
  const x = point.subarray(1, 33).toString('base64url');
  return { kty: 'EC', crv: 'P-256', x, y: point.subarray(33).toString('base64url'), d: d.toString('base64url'), kid: x.slice(0, 16), alg: 'ES256', use: 'sig' };
}

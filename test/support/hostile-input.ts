// Hostile values for generated requests: text at the edges of Unicode and UTF-8, nesting around the
// server's limit, and bodies in media types and encodings other than plain UTF-8 JSON.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';

/** Text a JSON string can carry. NUL and unpaired surrogates are refused by the contract (no database stores them). */
export const UNICODE: [label: string, value: string][] = [
  ['NUL', 'a\u0000b'],
  ['lone high surrogate', 'a\ud800b'],
  ['lone low surrogate', '\udfff'],
  ['reversed surrogate pair', '\ude00\ud83d'],
  ['RTL override', 'abc\u202edcba\u202c'],
  ['RTL text', 'مرحبا بالعالم שלום'],
  ['bidi isolates', '\u2066x\u2067y\u2068z\u2069'],
  ['emoji ZWJ family', '👩‍👩‍👧‍👦'],
  ['emoji flag and skin tone', '🇩🇪👍🏽'],
  ['astral plane', '𝕳𝖊𝖑𝖑𝖔 𐍈 \u{10ffff}'],
  ['combining marks', `Z${'\u0301\u0336\u0489'.repeat(200)}`],
  ['zero-width and BOM', '\u200b\u200c\u200d\ufeffx'],
  ['noncharacters', '\ufffe\uffff\ufdd0'],
  ['C0, DEL and C1 controls', '\u0001\u0007\u001b[31m\u007f\u0085\u009b'],
  ['line and paragraph separators', 'a\u2028b\u2029c\r\n'],
  ['NFD vs NFC', 'A\u030a Å ﬁ'],
  ['homoglyphs', 'аdmin ΑΒΓ'],
  ['replacement character', '\ufffd'],
  ['CJK', '中文字符テスト한국어'],
  ['4-byte characters, 5,000', '😀'.repeat(5_000)],
];

/** Whether the contract refuses `text` anywhere in a body: a NUL or an unpaired surrogate cannot be stored. */
export const isUnstorable = (text: string) => /\u0000|\p{Cs}/u.test(text);

/** Bytes that are not well-formed UTF-8, spliced raw into a JSON string. */
export const RAW_UTF8: [label: string, bytes: number[]][] = [
  ['overlong slash', [0xc0, 0xaf]],
  ['overlong NUL', [0xc0, 0x80]],
  ['overlong 3-byte', [0xe0, 0x80, 0xaf]],
  ['overlong 4-byte', [0xf0, 0x80, 0x80, 0xaf]],
  ['encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
  ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['5-byte form', [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ['lone continuation bytes', [0x80, 0xbf]],
  ['truncated sequence', [0xe2, 0x82]],
  ['0xFE 0xFF', [0xfe, 0xff]],
];

/** Percent-encodings of path segments and query values that do not decode to well-formed UTF-8. */
export const RAW_PERCENT = ['%ED%A0%80', '%F4%90%80%80', '%FF', '%C0%80', '%E2%82', '%F8%88%80%80%80'];

/** A well-formed string percent-encoded as UTF-8; unpaired surrogates as their three bytes (WTF-8), as a careless client sends them. */
export function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** `{"a":{"a":…"leaf"}}`, `depth` objects deep. */
export const nestObjects = (depth: number): unknown => Array.from({ length: depth }).reduce((value) => ({ a: value }), 'leaf');
/** The text of `depth` nested arrays: parsing it builds the value, without a stack per level in the generator. */
export const nestedArraysText = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

export interface Encoding {
  label: string;
  headers: Record<string, string>;
  encode(json: string): Buffer;
  /** Read as the JSON it is, or refused with this status and code. */
  refusal: [status: number, code: string] | null;
}

const utf8 = (json: string) => Buffer.from(json);
const UNSUPPORTED: Encoding['refusal'] = [415, 'unsupported_media_type'];
const jsonType = (contentType: string, label = contentType): Encoding => ({ label, headers: { 'content-type': contentType }, encode: utf8, refusal: null });
const refused = (contentType: string | undefined, label = contentType ?? 'no content type', encode = utf8): Encoding => ({
  label,
  headers: contentType === undefined ? {} : { 'content-type': contentType },
  encode,
  refusal: UNSUPPORTED,
});

/** The same JSON in other media types, charsets and content encodings. */
export const ENCODINGS: Encoding[] = [
  jsonType('application/json; charset=utf-8'),
  jsonType('application/json;charset=UTF-8'),
  jsonType('application/json; charset="utf-8"'),
  jsonType('Application/JSON'),
  jsonType('application/json; boundary=x; foo=bar', 'application/json with unknown parameters'),
  { label: 'gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, encode: (json) => gzipSync(json), refusal: null },
  { label: 'deflate', headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, encode: (json) => deflateSync(json), refusal: null },
  { label: 'br', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, encode: (json) => brotliCompressSync(json), refusal: null },
  { label: 'UTF-8 BOM', headers: { 'content-type': 'application/json' }, encode: (json) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), refusal: null },
  { label: 'charset=utf-16le, encoded so', headers: { 'content-type': 'application/json; charset=utf-16le' }, encode: (json) => Buffer.from(json, 'utf16le'), refusal: null },
  refused('text/plain'),
  refused('application/x-www-form-urlencoded', undefined, () => Buffer.from('name=x&format=github')),
  refused('multipart/form-data; boundary=XyZ', undefined, () => Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XyZ--\r\n')),
  refused('application/vnd.api+json'),
  refused('application/xml', undefined, () => Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>')),
  refused('*/*'),
  refused(''),
  refused(undefined),
  refused('application/json; charset=latin1'),
  refused('application/json; charset=bogus'),
  { label: 'content-encoding bogus', headers: { 'content-type': 'application/json', 'content-encoding': 'bogus' }, encode: utf8, refusal: UNSUPPORTED },
  { label: 'gzip header, plain body', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, encode: utf8, refusal: [400, 'invalid_json'] },
];

/** A gzip body that inflates past the size limit: the limit holds for what is read, not what is sent. */
let bomb: Buffer | undefined;
export const gzipBomb = () => (bomb ??= gzipSync(Buffer.from(`{"pad":"${'0'.repeat(20 * 1024 * 1024)}"}`)));

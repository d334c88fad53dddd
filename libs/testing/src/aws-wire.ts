import { createHash, createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { FakeRequest } from './fake-llm-server';

/**
 * AWS wire details a fake Bedrock needs: checking a request's Signature Version 4 against the secret key it
 * should have been signed with, and framing streamed chunks in AWS's binary event-stream encoding.
 */

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as AWS's signer does it (encodeURIComponent plus `!'()*`). */
const escapeUri = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface SigV4Check {
  readonly ok: boolean;
  readonly reason?: string;
  readonly accessKeyId?: string;
  readonly region?: string;
  readonly service?: string;
}

/**
 * Recomputes the SigV4 signature of a received request with `secrets[accessKeyId]` (path escaped once more
 * and dot segments normalised, as for every service but S3) and compares it with the one sent.
 */
export function checkSigV4(req: FakeRequest, secrets: ReadonlyMap<string, string>): SigV4Check {
  const auth = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { ok: false, reason: 'no SigV4 Authorization header' };
  const [, accessKeyId, date, region, service, signedHeaders, signature] = m;
  const secret = secrets.get(accessKeyId);
  if (!secret) return { ok: false, reason: `unknown access key ${accessKeyId}`, accessKeyId, region, service };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const segments: string[] = [];
  for (const s of req.path.split('/')) {
    if (!s || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  const canonicalPath = escapeUri(`/${segments.join('/')}`).replace(/%2F/g, '/');
  const query = [...new URLSearchParams(req.query)].map(([k, v]) => [escapeUri(k), escapeUri(v)]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&');
  const names = signedHeaders.split(';');
  const headers = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? sha256(req.raw));
  const canonical = [req.method, canonicalPath, query, headers, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(toSign).digest('hex');
  return expected === signature ? { ok: true, accessKeyId, region, service } : { ok: false, reason: 'signature mismatch', accessKeyId, region, service };
}

/** One message of AWS's event-stream encoding: prelude (lengths + CRC), string headers, payload, message CRC. */
export function eventStreamMessage(headers: Readonly<Record<string, string>>, payload: Buffer): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name);
      const v = Buffer.from(value);
      const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
      h.writeUInt8(n.length, 0);
      n.copy(h, 1);
      h.writeUInt8(7, 1 + n.length); // 7: string
      h.writeUInt16BE(v.length, 2 + n.length);
      v.copy(h, 4 + n.length);
      return h;
    }),
  );
  const total = 12 + headerBytes.length + payload.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, headerBytes, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, crc]);
}

/** A Bedrock `chunk` event carrying one Anthropic stream event (its JSON base64-encoded in `bytes`). */
export function bedrockChunk(event: object): Buffer {
  const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
  return eventStreamMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, payload);
}

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An S3-compatible store for the S3 pipeline source's tests, built from the S3 API reference: one bucket,
 * path-style addressing, ListObjectsV2 (`list-type=2`, `prefix`, `continuation-token`, `max-keys`,
 * `start-after`, `encoding-type=url`), GetObject, S3 `<Error>` bodies, and SigV4 verified on every request the
 * way S3 does (the canonical request rebuilt here from the AWS documentation, independently of the client's
 * signer), so an unknown key id or a wrong secret is refused with 403.
 */
export interface StoredObject {
  body: Buffer;
  etag: string;
  lastModified: string;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  status: number;
}

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

export class S3Server {
  readonly objects = new Map<string, StoredObject>();
  readonly requests: SeenRequest[] = [];
  /** The most keys one listing page returns (S3's is 1000), lowered to exercise paging. */
  maxKeys = 1000;
  /** Answers queued before the real one (throttling: 503 SlowDown with a Retry-After). */
  readonly throttle: { status: number; retryAfter?: string }[] = [];
  /** Keys whose GetObject answers 500 InternalError. */
  readonly broken = new Set<string>();
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly bucket: string,
    private readonly credentials: { accessKeyId: string; secretAccessKey: string; region: string },
  ) {}

  static async start(bucket: string, credentials: { accessKeyId: string; secretAccessKey: string; region: string }): Promise<S3Server> {
    let self: S3Server | undefined;
    const server = createServer((req, res) => self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new S3Server(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bucket, credentials);
    return self;
  }

  put(key: string, body: string | Buffer, lastModified = new Date()): void {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    this.objects.set(key, { body: bytes, etag: `"${createHash('md5').update(bytes).digest('hex')}"`, lastModified: new Date(Math.floor(lastModified.getTime() / 1000) * 1000).toISOString() });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private error(res: ServerResponse, status: number, code: string, message: string): void {
    res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xml(message)}</Message><RequestId>0</RequestId></Error>`);
  }

  /** SigV4 as S3 checks it: the scope, the signed headers, then the signature over the canonical request. Null when it holds, else why not. */
  private authProblem(req: IncomingMessage, rawPath: string, rawQuery: string): [number, string, string] | null {
    const auth = req.headers.authorization ?? '';
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/.exec(auth);
    if (!m) return [403, 'AccessDenied', 'Access Denied'];
    const [, keyId, date, region, signedHeaders, signature] = m;
    if (keyId !== this.credentials.accessKeyId) return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
    if (region !== this.credentials.region) return [400, 'AuthorizationHeaderMalformed', `the region '${region}' is wrong; expecting '${this.credentials.region}'`];
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const payload = req.headers['x-amz-content-sha256'];
    if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date) return [403, 'AccessDenied', 'x-amz-date is missing or does not match the credential scope'];
    if (typeof payload !== 'string') return [400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'];
    const signed = signedHeaders.split(';');
    if (!signed.includes('host') || !signed.includes('x-amz-date') || !signed.includes('x-amz-content-sha256')) return [403, 'AccessDenied', 'host, x-amz-date and x-amz-content-sha256 must be signed'];
    const at = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
    if (Math.abs(Date.now() - at) > 15 * 60_000) return [403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.'];
    const canonicalUri = rawPath.split('/').map((seg) => rfc3986(decodeURIComponent(seg))).join('/');
    const canonicalQuery = rawQuery
      .split('&')
      .filter(Boolean)
      .map((pair) => {
        const [k, v = ''] = pair.split('=');
        return [rfc3986(decodeURIComponent(k.replace(/\+/g, ' '))), rfc3986(decodeURIComponent(v.replace(/\+/g, ' ')))];
      })
      .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    const headerValue = (name: string) => String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ');
    const canonicalHeaders = signed.map((h) => `${h}:${headerValue(h)}\n`).join('');
    const canonical = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, payload].join('\n');
    const scope = `${date}/${region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
    const key = hmac(hmac(hmac(hmac(`AWS4${this.credentials.secretAccessKey}`, date), region), 's3'), 'aws4_request');
    const expected = hmac(key, toSign);
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
    return null;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?');
    const query = new URLSearchParams(rawQuery);
    const seen: SeenRequest = { method: req.method ?? '', path: decodeURIComponent(rawPath), query, status: 0 };
    this.requests.push(seen);
    res.on('finish', () => (seen.status = res.statusCode));
    const problem = this.authProblem(req, rawPath, rawQuery);
    if (problem) return this.error(res, ...problem);
    const throttled = this.throttle.shift();
    if (throttled) {
      if (throttled.retryAfter !== undefined) res.setHeader('retry-after', throttled.retryAfter);
      return this.error(res, throttled.status, 'SlowDown', 'Please reduce your request rate.');
    }
    if (req.method !== 'GET') return this.error(res, 405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    const [, bucket, ...keyParts] = rawPath.split('/');
    if (decodeURIComponent(bucket) !== this.bucket) return this.error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
    if (keyParts.length === 0 || (keyParts.length === 1 && keyParts[0] === '')) return this.list(res, query);
    const key = keyParts.map(decodeURIComponent).join('/');
    const object = this.objects.get(key);
    if (!object) return this.error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    if (this.broken.has(key)) return this.error(res, 500, 'InternalError', 'We encountered an internal error. Please try again.');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': object.body.length, etag: object.etag, 'last-modified': new Date(object.lastModified).toUTCString() }).end(object.body);
  }

  private list(res: ServerResponse, q: URLSearchParams): void {
    if (q.get('list-type') !== '2') return this.error(res, 400, 'InvalidArgument', 'only ListObjectsV2 (list-type=2) is served here');
    const prefix = q.get('prefix') ?? '';
    const max = Math.min(Number(q.get('max-keys') ?? 1000), this.maxKeys);
    const token = q.get('continuation-token');
    const after = token ? Buffer.from(token, 'base64url').toString() : (q.get('start-after') ?? '');
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
    const page = keys.slice(0, max);
    const truncated = keys.length > page.length;
    const enc = q.get('encoding-type') === 'url' ? rfc3986 : (s: string) => s;
    const contents = page.map((k) => {
      const o = this.objects.get(k)!;
      return `<Contents><Key>${xml(enc(k))}</Key><LastModified>${o.lastModified}</LastModified><ETag>${xml(o.etag)}</ETag><Size>${o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
    });
    const next = truncated ? `<NextContinuationToken>${Buffer.from(page[page.length - 1]).toString('base64url')}</NextContinuationToken>` : '';
    res.writeHead(200, { 'content-type': 'application/xml' }).end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${this.bucket}</Name><Prefix>${xml(enc(prefix))}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys>${q.get('encoding-type') === 'url' ? '<EncodingType>url</EncodingType>' : ''}<IsTruncated>${truncated}</IsTruncated>${token ? `<ContinuationToken>${token}</ContinuationToken>` : ''}${next}${contents.join('')}</ListBucketResult>`,
    );
  }
}

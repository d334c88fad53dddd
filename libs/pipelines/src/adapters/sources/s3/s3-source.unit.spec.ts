import fc from 'fast-check';
import { isProblem } from '../../../domain/pipeline-source';
import { parseS3Source } from '../../../domain/pipeline-s3-source';
import { retryAfterMs } from './retry-get';
import { bucketUrl } from './s3-source';
import { readListPage, readS3Error } from './s3-xml';

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** S3's `encoding-type=url`: form encoding (a space as `+`, a `+` as `%2B`). */
const s3UrlEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
const page = (keys: string[], more: string | null, encoded = true) =>
  `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>${encoded ? '<EncodingType>url</EncodingType>' : ''}<IsTruncated>${more !== null}</IsTruncated>${more !== null ? `<NextContinuationToken>${more}</NextContinuationToken>` : ''}${keys
    .map((k) => `<Contents><Key>${escapeXml(encoded ? s3UrlEncode(k) : k)}</Key><ETag>&quot;e1&quot;</ETag><Size>12</Size><LastModified>2026-01-02T03:04:05.000Z</LastModified></Contents>`)
    .join('')}</ListBucketResult>`;

describe('the s3 source, pure parts', () => {
  it('reads any key back from a url-encoded ListObjectsV2 page, with its ETag, size and the next token', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((k) => !/[\uD800-\uDFFF]/.test(k)), { maxLength: 5 }), fc.option(fc.base64String({ minLength: 4, maxLength: 20 })), (keys, token) => {
        const read = readListPage(page(keys, token));
        expect(read.objects.map((o) => o.key)).toEqual(keys);
        expect(read.nextToken).toBe(token);
        for (const o of read.objects) expect(o).toMatchObject({ etag: '"e1"', size: 12, lastModified: '2026-01-02T03:04:05.000Z' });
      }),
    );
    expect(readListPage(page(['a+b c.txt'], null, false)).objects[0].key).toBe('a+b c.txt');
  });

  it('refuses an answer that is not a listing, and reads an S3 error', () => {
    expect(() => readListPage('<Error><Code>AccessDenied</Code></Error>')).toThrow('not a ListBucketResult');
    expect(readS3Error('<?xml version="1.0"?><Error><Code>SignatureDoesNotMatch</Code><Message>Check your key.</Message></Error>')).toBe('SignatureDoesNotMatch: Check your key.');
    expect(readS3Error('plain text')).toBeNull();
  });

  it('checks the settings field by field and reads the deprecated prefix as a list of one', () => {
    const base = { type: 's3', bucket: 'my-docs', region: 'us-east-1' };
    expect(parseS3Source({ ...base, prefix: 'legal/' })).toEqual({ type: 's3', bucket: 'my-docs', region: 'us-east-1', prefixes: ['legal/'], pos_regex: [], neg_regex: [] });
    expect(parseS3Source({ ...base, prefixes: ['a/', 'a/', 'b/'] })).toMatchObject({ prefixes: ['a/', 'b/'] });
    const field = (v: Record<string, unknown>) => {
      const r = parseS3Source(v);
      return isProblem(r) ? r[0] : null;
    };
    expect(field({ ...base, bucket: 'ab' })).toBe('source.bucket');
    expect(field({ ...base, bucket: 'a..b' })).toBe('source.bucket');
    expect(field({ ...base, region: 'us east' })).toBe('source.region');
    expect(field({ ...base, endpoint_url: 'http://u:p@minio:9000' })).toBe('source.endpoint_url');
    expect(field({ ...base, prefix: 'a/', prefixes: ['b/'] })).toBe('source.prefix');
    expect(field({ ...base, neg_regex: ['ok', '[z-a]'] })).toBe('source.neg_regex[1]');
    // A PATCH merges top-level fields into the stored source.
    const stored = parseS3Source({ ...base, endpoint_url: 'http://minio:9000/', prefixes: ['x/'] });
    expect(parseS3Source({ type: 's3', region: 'eu-west-1' }, stored as never)).toEqual({ type: 's3', bucket: 'my-docs', region: 'eu-west-1', endpoint_url: 'http://minio:9000', prefixes: ['x/'], pos_regex: [], neg_regex: [] });
  });

  it('addresses Amazon S3 virtual-hosted, path-style for dotted names and under an endpoint', () => {
    const s = { type: 's3', region: 'eu-west-1', prefixes: [], pos_regex: [], neg_regex: [] } as const;
    expect(bucketUrl({ ...s, bucket: 'docs' })).toBe('https://docs.s3.eu-west-1.amazonaws.com');
    expect(bucketUrl({ ...s, bucket: 'docs.example.com' })).toBe('https://s3.eu-west-1.amazonaws.com/docs.example.com');
    expect(bucketUrl({ ...s, bucket: 'docs', endpoint_url: 'http://minio:9000' })).toBe('http://minio:9000/docs');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

import { Parser } from 'htmlparser2';

/** One object of a ListObjectsV2 page. */
export interface S3Object {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  readonly lastModified: string;
}

export interface ListPage {
  readonly objects: readonly S3Object[];
  readonly nextToken: string | null;
}

/** The children's text of each element of the given names under their parent (`Contents/Key`, `Error/Code`), as a flat reader. */
function walk(xml: string, onClose: (path: readonly string[], text: string) => void): void {
  const path: string[] = [];
  let text = '';
  const parser = new Parser(
    {
      onopentag(name) {
        path.push(name);
        text = '';
      },
      ontext(t) {
        text += t;
      },
      onclosetag() {
        onClose(path, text);
        path.pop();
        text = '';
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
}

/**
 * A ListObjectsV2 answer (`ListBucketResult`) asked with `encoding-type=url`, so keys come URL-encoded (a key may
 * hold characters XML 1.0 cannot carry) and are decoded here.
 */
export function readListPage(xml: string): ListPage {
  const objects: S3Object[] = [];
  let current: Partial<Record<'Key' | 'ETag' | 'Size' | 'LastModified', string>> = {};
  let truncated = false;
  let nextToken: string | null = null;
  let encoded = false;
  let root: string | null = null;
  walk(xml, (path, text) => {
    root ??= path[0];
    const name = path[path.length - 1];
    if (path.length === 3 && path[1] === 'Contents' && (name === 'Key' || name === 'ETag' || name === 'Size' || name === 'LastModified')) current[name] = text;
    else if (path.length === 2 && name === 'Contents') {
      if (current.Key !== undefined) objects.push({ key: current.Key, etag: current.ETag ?? '', size: Number(current.Size ?? 0), lastModified: current.LastModified ?? '' });
      current = {};
    } else if (path.length === 2 && name === 'IsTruncated') truncated = text.trim() === 'true';
    else if (path.length === 2 && name === 'NextContinuationToken') nextToken = text;
    else if (path.length === 2 && name === 'EncodingType') encoded = text.trim() === 'url';
  });
  if (root !== 'ListBucketResult') throw new Error('the answer is not a ListBucketResult');
  const decode = (k: string) => (encoded ? decodeURIComponent(k.replace(/\+/g, ' ')) : k);
  return { objects: objects.map((o) => ({ ...o, key: decode(o.key) })), nextToken: truncated ? nextToken : null };
}

/** `Code: Message` of an S3 `<Error>` body, or null when the body is not one. */
export function readS3Error(xml: string): string | null {
  const found: Record<string, string> = {};
  try {
    walk(xml, (path, text) => {
      if (path.length === 2 && path[0] === 'Error' && (path[1] === 'Code' || path[1] === 'Message')) found[path[1]] = text.trim();
    });
  } catch {
    return null;
  }
  return found.Code ? `${found.Code}${found.Message ? `: ${found.Message.slice(0, 300)}` : ''}` : null;
}

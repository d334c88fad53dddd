import type { ExtractedDocument } from '@lib/extraction';
import type { PageVersion, FetchedRecord } from '../../domain/pipeline-run';
import type { PipelineSource } from '../../domain/pipeline';
import type { Problem } from '../../domain/pipeline-source';
import { parseWebSource } from '../../domain/pipeline-source';
import { parseScimSource } from '../../domain/pipeline-scim-source';
import { fetchScimSource } from './scim-source';
import { parseSharepointSource } from '../../domain/pipeline-sharepoint-source';
import { fetchSharepointSource } from './sharepoint-source';
import { parseBoxSource } from '../../domain/pipeline-box-source';
import { fetchBoxSource } from './box-source';
import { parseGoogleDriveSource } from '../../domain/pipeline-google-drive-source';
import { fetchGoogleDriveSource } from './google-drive-source';
import { fetchWebSource } from './web-source';

/** What a run gives any source: the guarded fetch, its opened credential, what the run already has. */
export interface SourceFetchJob<S extends PipelineSource = PipelineSource> {
  readonly source: S;
  readonly fetch: typeof fetch;
  /** The generic `auth` (bearer / header) as request headers; empty for sources with their own credential fields. */
  readonly headers: Record<string, string>;
  /** The source's own secret fields (`secretFields`), opened for this run only: never logged or recorded. */
  readonly secrets: Readonly<Record<string, string>>;
  /** A retry run reads only these records (dead letters); null reads the whole source. */
  readonly only: readonly string[] | null;
  /** Records this run already fetched (a resumed run): not appended again. */
  readonly known: ReadonlySet<string>;
  /** Incremental sync: the versions (ETag, last-modified, cursor…) of the last sync; null (full refresh) reads everything. */
  readonly versions: Readonly<Record<string, PageVersion>> | null;
  readonly signal: AbortSignal;
  readonly onRecord: (record: FetchedRecord) => Promise<void>;
  /** A file's text through the extraction pool (the upload formats); throws ExtractionError for one it cannot read. */
  readonly extract: (file: Buffer, filename: string) => Promise<ExtractedDocument>;
  /** The service's environment, for the fixed hosts of a cloud API a test points at 127.0.0.1 (docs/pipelines.md). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** `seen`: every record found with its version (for the next incremental sync); `complete`: the whole source was read. */
export interface SourceFetchResult {
  readonly fetched: number;
  readonly seen: Record<string, PageVersion>;
  readonly complete: boolean;
}

/**
 * One source type (docs/pipelines.md, Sources): its checks and its client. A source takes its credential either
 * through the generic `auth` object (bearer / header: `genericAuth`) or through its own secret fields
 * (`secretFields`, dot paths such as `secret_access_key` or `auth.client_secret`), which the edge takes out of
 * the settings before `parse`, seals, masks on reads, and keeps on a PATCH that omits them or sends `****`.
 */
export interface SourceClient<S extends PipelineSource = PipelineSource> {
  readonly type: S['type'];
  readonly genericAuth: boolean;
  readonly secretFields?: readonly { readonly path: string; readonly required: boolean }[];
  /** The settings without their secrets; `base`: the stored source of the same type a PATCH merges into. */
  parse(v: Record<string, unknown>, base?: S): Omit<S, 'auth'> | Problem;
  fetch(job: SourceFetchJob<S>): Promise<SourceFetchResult>;
}

const web: SourceClient<Extract<PipelineSource, { type: 'web' }>> = { type: 'web', genericAuth: true, parse: parseWebSource, fetch: fetchWebSource };
const scim: SourceClient<Extract<PipelineSource, { type: 'scim' }>> = { type: 'scim', genericAuth: true, parse: parseScimSource, fetch: fetchScimSource };
const sharepoint: SourceClient<Extract<PipelineSource, { type: 'sharepoint' }>> = { type: 'sharepoint', genericAuth: false, secretFields: [{ path: 'client_secret', required: true }], parse: parseSharepointSource, fetch: fetchSharepointSource };
const box: SourceClient<Extract<PipelineSource, { type: 'box' }>> = { type: 'box', genericAuth: false, secretFields: [{ path: 'auth.client_secret', required: true }], parse: parseBoxSource, fetch: fetchBoxSource };
const googleDrive: SourceClient<Extract<PipelineSource, { type: 'google_drive' }>> = { type: 'google_drive', genericAuth: false, secretFields: [{ path: 'private_key', required: true }], parse: parseGoogleDriveSource, fetch: fetchGoogleDriveSource };

/** Every built source, by type. A new source adds its one entry here. */
export const SOURCE_CLIENTS: Readonly<Record<string, SourceClient>> = Object.fromEntries([web, scim, sharepoint, box, googleDrive].map((c) => [c.type, c as unknown as SourceClient]));

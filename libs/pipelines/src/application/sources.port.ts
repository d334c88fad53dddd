import type { ExtractedDocument } from '@lib/extraction';
import type { PipelineSource } from '../domain/pipeline';
import type { FetchedRecord, PageVersion } from '../domain/pipeline-run';
import type { Problem } from '../domain/pipeline-source';

/** The service's file parser (libs/extraction: the upload formats), on its worker pool when the process has one. */
export type ExtractFile = (file: Buffer, filename: string) => Promise<ExtractedDocument>;

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
  /** The service's environment (ServiceConfig.env): limits the operator sets (PIPELINE_FILE_SHARE_ROOTS), the fixed hosts of a cloud API a test points at 127.0.0.1. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Files to text with the service's parser (libs/extraction, on its pool); throws ExtractionError for one it cannot read. */
  readonly extract: ExtractFile;
  readonly signal: AbortSignal;
  readonly onRecord: (record: FetchedRecord) => Promise<void>;
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
  /** `check`: a reason the given value is unusable (a 400 naming the field), checked at the edge before it is sealed. */
  readonly secretFields?: readonly { readonly path: string; readonly required: boolean; readonly check?: (value: string) => string | null }[];
  /** The settings without their secrets; `base`: the stored source of the same type a PATCH merges into. */
  parse(v: Record<string, unknown>, base: S | undefined, env: Readonly<Record<string, string | undefined>>): Omit<S, 'auth'> | Problem;
  fetch(job: SourceFetchJob<S>): Promise<SourceFetchResult>;
}

/** Every built source, by type (adapters/sources/sources.ts: SOURCE_CLIENTS, bound by PipelinesModule). */
export type SourceCatalogue = Readonly<Record<string, SourceClient>>;
export const SOURCE_CATALOGUE = Symbol('SourceCatalogue');

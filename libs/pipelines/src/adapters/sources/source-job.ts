import type { PipelineSource } from '../../domain/pipeline';
import type { FetchedRecord, PageVersion } from '../../domain/pipeline-run';
import type { ExtractFile } from './file-text';

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

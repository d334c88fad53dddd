/** A tool the lambda declared, as its code sees it in `tool.list()`. */
export interface LambdaToolSpec {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Record<string, unknown>;
}

export type HostAnswer = { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly error: string };
export type ArtifactAnswer = { readonly ok: true; readonly data: Buffer; readonly filename: string } | { readonly ok: false; readonly error: string };

export interface LambdaJob {
  readonly code: string;
  /** false: only validate the code and discover its schemas. */
  readonly run: boolean;
  readonly args?: Record<string, unknown>;
  readonly tools?: readonly LambdaToolSpec[];
  readonly deadlineMs: number;
  /** How many levels of lambdas this lambda may start below itself (0: none); its call reserves one sandbox a level. */
  readonly height?: number;
  /** Whose call this is (the per-principal share of the sandboxes); absent: the service's own. */
  readonly principal?: string;
  readonly signal?: AbortSignal;
  /** Runs `tool.<name>(...)`; the sandbox runs at most 8 such calls at once, more wait. */
  readonly onTool?: (name: string, args: Record<string, unknown>) => Promise<HostAnswer>;
  readonly onArtifact?: (artifactId: string) => Promise<ArtifactAnswer>;
}

export interface LambdaOutcome {
  readonly validation: { readonly status: 'valid' | 'invalid'; readonly errors: string[] };
  readonly input_schema: Record<string, unknown> | null;
  readonly output_schema: Record<string, unknown> | null;
  readonly execution?: {
    readonly success: boolean;
    readonly output?: unknown;
    readonly error?: { readonly message: string; readonly traceback?: string };
    readonly latency_millis: number;
  };
  /** Peak resident memory of the sandbox process (Pyodide included), in MB; 0 where /proc is not readable. */
  readonly memory_used_mb: number;
  /** Whether the job waited for a sandbox to start (cold) or took one already waiting (warm). */
  readonly cold: boolean;
  /** Set when the sandbox was stopped (deadline, memory, crash) rather than the code answering. */
  readonly stopped?: string;
}

/**
 * Runs a user's Python lambda (docs/lambda-tools.md): validates its code and discovers its schemas, or runs it
 * with its arguments and composed tools, each job in a sandbox of its own. Implemented by
 * adapters/lambda/lambda-sandbox.ts (LambdaSandbox); the abstract class is the Nest token ToolsModule binds.
 */
export abstract class LambdaRunner {
  /** Throws a DomainError (503) when the sandbox is not available; a job the budget refuses is a failed run saying why. */
  abstract run(job: LambdaJob): Promise<LambdaOutcome>;
  /** Gets sandboxes ready before a request needs them (the service's start, when lambdas exist); never throws. */
  abstract prepare(): Promise<void>;
  /** At a start without lambdas: the start snapshot made ahead when DATA_DIR keeps none (LAMBDA_SNAPSHOT_AT_START); never throws. */
  abstract prepareSnapshot(): Promise<void>;
}

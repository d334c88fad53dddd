/** Bundles the console into `outdir` (default `dist/console`) and returns the directory. */
export function buildConsole(outdir?: string): Promise<string>;

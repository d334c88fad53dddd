/**
 * Session artifacts' bytes, content-addressed by their sha256. The event log holds only the hash and the metadata,
 * so it stays small and replayable; a file uploaded twice is stored once. Rejected: bytes in the events (every replay
 * and rebuild would read them). Bound in AgentsModule: a file store under DATA_DIR on one machine, PostgreSQL when
 * POSTGRES_URL is set (an artifact uploaded through one API host is read by a turn on another).
 */
export abstract class ArtifactStore {
  /** Stores the bytes (once per content) and returns their sha256. */
  abstract put(bytes: Buffer): Promise<string>;
  /** The bytes of a stored sha256; a DomainError (`artifact.missing`) when this store does not hold them. */
  abstract get(sha256: string): Promise<Buffer>;
}

/** Refuses anything but a lowercase hex sha256 (it names a file or a row). */
export function assertSha256(sha256: string): void {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
}

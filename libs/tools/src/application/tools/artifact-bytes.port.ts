/**
 * The bytes of a session artifact by its content hash: what the artifact, scratch pad, image and lambda tools read.
 * libs/tools owns the port; the agents context binds it to its artifact store.
 */
export abstract class ArtifactBytes {
  abstract get(sha256: string): Promise<Buffer>;
}

/** What the platform adapters share: reading a header of a delivery, and the reason an upstream refusal gives. */
import type { InboundRequest } from '../application/connectors/connector-platform.port';

export const header = (req: InboundRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The reason an upstream answer gives, short and without echoing the request. */
export async function upstreamFailure(what: string, res: Response): Promise<Error> {
  const text = (await res.text().catch(() => '')).slice(0, 200);
  return new Error(`${what} answered ${res.status}${text ? `: ${text}` : ''}`);
}

import type { Response } from 'express';
import { sendJson } from './send-json';

/** The headers and bytes a response was given. */
function capture(): { res: Response; sent: { status?: number; headers: Record<string, unknown>; body?: Buffer } } {
  const sent: { status?: number; headers: Record<string, unknown>; body?: Buffer } = { headers: {} };
  const res = {
    status: (code: number) => ((sent.status = code), res),
    setHeader: (name: string, value: unknown) => ((sent.headers[name] = value), res),
    end: (body: Buffer) => ((sent.body = body), res),
  };
  return { res: res as unknown as Response, sent };
}

describe('sendJson', () => {
  it('announces the answer’s length in bytes, not characters, so a result with non-ASCII text arrives whole', () => {
    const answer = { search_results: [{ text: 'α-synuclein in naïve T cells — 10 µm', score: 0.9, document_metadata: { title: 'Ωmega' } }] };
    const { res, sent } = capture();
    sendJson(res, 200, answer);
    expect(sent.status).toBe(200);
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(sent.headers['content-length']).toBe(sent.body!.length);
    expect(sent.body!.length).toBeGreaterThan(JSON.stringify(answer).length);
    expect(JSON.parse(sent.body!.toString('utf8'))).toEqual(answer);
  });
});

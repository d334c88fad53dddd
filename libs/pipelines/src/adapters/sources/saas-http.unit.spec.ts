import { documentText } from './extract-text';
import { retryAfterSeconds, serviceUrl } from './saas-http';

describe('SaaS sources: shared helpers', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds(null, now)).toBe(1);
    expect(retryAfterSeconds('soon', now)).toBe(1);
  });

  it('takes a cloud host from the environment, else the real one, and names a bad variable', () => {
    expect(serviceUrl({}, 'BOX_API_URL', 'https://api.box.com')).toBe('https://api.box.com');
    expect(serviceUrl({ BOX_API_URL: 'http://127.0.0.1:9/' }, 'BOX_API_URL', 'https://api.box.com')).toBe('http://127.0.0.1:9');
    expect(() => serviceUrl({ BOX_API_URL: 'ftp://x' }, 'BOX_API_URL', 'https://api.box.com')).toThrow('BOX_API_URL must be an http(s) URL');
  });

  it('turns an extracted document into text: titles and paragraphs in order, then tables as rows', () => {
    const text = documentText({ metadata: {}, sections: [{ title: 'Intro', text: 'Hello.', sections: [{ title: 'Sub', text: 'Nested.' }] }], tables: [{ id: 't1', headers: [[{ text_value: 'A' }, { text_value: 'B' }]], rows: [[{ int_value: 1 }, { bool_value: true }]] }] });
    expect(text).toBe('Intro\n\nHello.\n\nSub\n\nNested.\n\nA | B\n1 | true');
  });
});

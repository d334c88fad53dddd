import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals with a fresh IV each time and opens only with the same key and record', () => {
    const a = box.seal({ token: 'sk-123' }, 'llm:1');
    const b = box.seal({ token: 'sk-123' }, 'llm:1');
    expect(a.ct).not.toBe(b.ct);
    expect(JSON.stringify(a)).not.toContain('sk-123');
    expect(box.open(a, 'llm:1')).toEqual({ token: 'sk-123' });
    expect(() => box.open(a, 'llm:2')).toThrow(/integrity/);
    expect(() => new SecretBox(randomBytes(32)).open(a, 'llm:1')).toThrow(/another secrets key/);
  });

  it('reads SECRETS_KEY as hex or base64 of 32 bytes', () => {
    const key = randomBytes(32);
    expect(SecretBox.parseKey(key.toString('hex'))).toEqual(key);
    expect(SecretBox.parseKey(key.toString('base64'))).toEqual(key);
    expect(() => SecretBox.parseKey('short')).toThrow(/32 bytes/);
  });
});

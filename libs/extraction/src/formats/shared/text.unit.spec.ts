import { ExtractionError } from '../../extracted';
import { decodeText, splitParagraphs } from './text';

const corrupt = (fn: () => unknown) => {
  expect(fn).toThrow(ExtractionError);
  try {
    fn();
  } catch (e) {
    expect((e as ExtractionError).kind).toBe('corrupt');
  }
};

describe('decodeText', () => {
  it('strips a UTF-8 byte order mark', () => {
    expect(decodeText(Buffer.from('\ufeffcafé', 'utf8'), 'txt')).toBe('café');
  });

  it('reads UTF-16 with a byte order mark', () => {
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Otter ä', 'utf16le')]), 'txt')).toBe('Otter ä');
    const be = Buffer.from('Heron', 'utf16le').swap16();
    expect(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), be]), 'txt')).toBe('Heron');
  });

  it('falls back to windows-1252 when the bytes are not UTF-8', () => {
    expect(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]), 'txt')).toBe('café €5');
  });

  it('throws corrupt for NUL bytes, and for mostly-control bytes without any NUL', () => {
    corrupt(() => decodeText(Buffer.from('text\0more'), 'txt'));
    const controls = Buffer.from(Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 0x01 + (i % 7) : 0x41 + (i % 26))));
    corrupt(() => decodeText(controls, 'md'));
  });

  it('accepts text with the odd control character (a form feed, an escape)', () => {
    expect(decodeText(Buffer.from(`page one\fpage two \x1b ${'word '.repeat(20)}`), 'txt')).toContain('page two');
  });
});

describe('splitParagraphs', () => {
  it('splits at blank or white-space-only lines, keeps line breaks inside a paragraph', () => {
    expect(splitParagraphs('one\r\nstill one  \r\n \t \r\n\r\n\r\ntwo\n\n')).toEqual(['one\nstill one', 'two']);
    expect(splitParagraphs('\n\n  \n')).toEqual([]);
  });
});

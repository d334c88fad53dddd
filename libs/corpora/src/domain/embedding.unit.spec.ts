import { decodeVector, encodeVector } from './embedding';

describe('part vectors as the log carries them', () => {
  it('are the float32 values in little-endian order, Base64-encoded, whatever the array\'s offset', () => {
    const values = [1, -0.5, 3.25e-8, -123456.789, 0];
    const expected = Buffer.alloc(values.length * 4);
    values.forEach((v, i) => expected.writeFloatLE(v, i * 4));
    const backing = new Float32Array([9, ...values, 9]);
    expect(encodeVector(backing.subarray(1, 1 + values.length))).toBe(expected.toString('base64'));
    // The log's first documents were written that way: they decode to the same values.
    expect(Array.from(decodeVector(expected.toString('base64')))).toEqual(Array.from(new Float32Array(values)));
  });

  it('round-trip 100 dimensions exactly, each decoded vector in a buffer of its own', () => {
    const v = Float32Array.from({ length: 100 }, (_, i) => Math.sin(i) / (i + 1));
    const a = decodeVector(encodeVector(v));
    const b = decodeVector(encodeVector(v));
    expect(a).toEqual(v);
    expect(a.buffer).not.toBe(b.buffer);
    expect(a.byteOffset).toBe(0);
  });
});

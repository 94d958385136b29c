// pvkt.mjs - the tiny tensor file format shared by tools/ref/*.mjs and the parity tests.
//
// A .pvkt file is one dense, row-major tensor, little-endian throughout:
//   offset 0   4 bytes   magic "PVKT"
//   offset 4   uint32    dtype: 1 = float32, 3 = int32 (the codes of enum pvk_dtype in src/model/model.h)
//   offset 8   uint32    ndim (0..8)
//   offset 12  int64     dims[ndim]
//   then       prod(dims) elements of 4 bytes each
// Reader in C: tests/nn/test_cpu_parity.c (read_pvkt).
import fs from 'node:fs';

export const DTYPE_F32 = 1;
export const DTYPE_I32 = 3;

export function writePvkt(file, data, dims) {
  let dtype;
  if (data instanceof Float32Array) dtype = DTYPE_F32;
  else if (data instanceof Int32Array) dtype = DTYPE_I32;
  else throw new Error(`${file}: only Float32Array and Int32Array can be written`);
  const n = dims.reduce((a, b) => a * Number(b), 1);
  if (n !== data.length) throw new Error(`${file}: ${data.length} values for dims [${dims}]`);
  const head = Buffer.alloc(12 + 8 * dims.length);
  head.write('PVKT', 0, 'latin1');
  head.writeUInt32LE(dtype, 4);
  head.writeUInt32LE(dims.length, 8);
  dims.forEach((d, i) => head.writeBigInt64LE(BigInt(d), 12 + 8 * i));
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, body]));
}

export function readPvkt(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'PVKT') throw new Error(`${file}: not a PVKT tensor file`);
  const dtype = buf.readUInt32LE(4), ndim = buf.readUInt32LE(8);
  if (ndim > 8 || buf.length < 12 + 8 * ndim) throw new Error(`${file}: bad header (ndim ${ndim})`);
  const dims = [];
  for (let i = 0; i < ndim; i++) dims.push(Number(buf.readBigInt64LE(12 + 8 * i)));
  const n = dims.reduce((a, b) => a * b, 1);
  const off = 12 + 8 * ndim;
  if (buf.length !== off + 4 * n) throw new Error(`${file}: ${buf.length - off} data bytes for dims [${dims}]`);
  const bytes = new Uint8Array(buf.subarray(off)); // copy: typed arrays need an aligned offset
  let data;
  if (dtype === DTYPE_F32) data = new Float32Array(bytes.buffer, 0, n);
  else if (dtype === DTYPE_I32) data = new Int32Array(bytes.buffer, 0, n);
  else throw new Error(`${file}: unknown dtype ${dtype}`);
  return { data, dims };
}

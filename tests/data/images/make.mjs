// Fixture generator for the image decoding and preprocessing tests (run by make.sh).
// Decoding fixtures are tiny files of a known pixel pattern (the tests recompute the pattern);
// preprocessing fixtures are OpenCV 4.6.0 (opencv-js, the build ref_ocr.mjs uses) outputs.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(path.join(process.env.REF_HOME, 'package.json'));
const sharp = require('sharp');
const cv = require('@techstark/opencv-js');
const { PNG } = require('pngjs');
const f32 = Math.fround;
const dir = process.argv[2];
const out = (name, buf) => fs.writeFileSync(path.join(dir, name), buf);

// ---------------------------------------------------------------- the decode pattern (see test_image_decode.c)
const PW = 7, PH = 5;
const pat = (x, y) => [(10 + 30 * x) & 255, (20 + 40 * y) & 255, (37 * x + 53 * y) & 255];
const patGray = (x, y) => (31 * x + 17 * y + 3) & 255;
const patAlpha = (x, y) => (255 - 36 * x - 7 * y) & 255;

// ---------------------------------------------------------------- a small PNG writer (full control of type/depth)
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(zlib.crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}
function png(w, h, depth, ctype, rowBytes, extra = []) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = depth; ihdr[9] = ctype;
  const raw = [];
  for (let y = 0; y < h; y++) raw.push(Buffer.from([0]), Buffer.from(rowBytes(y)));
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr), ...extra,
    chunk('IDAT', zlib.deflateSync(Buffer.concat(raw))), chunk('IEND', Buffer.alloc(0))]);
}
const row = (w, f) => { const a = []; for (let x = 0; x < w; x++) a.push(...f(x)); return a; };
const hi16 = (v, x) => [v, (0xF0 + x) & 255]; // 16-bit sample whose high byte is v and low byte is large

function writeDecodeFixtures() {
  out('gray8.png', png(PW, PH, 8, 0, (y) => row(PW, (x) => [patGray(x, y)])));
  out('gray16.png', png(PW, PH, 16, 0, (y) => row(PW, (x) => hi16(patGray(x, y), x))));
  out('gray1.png', png(8, 2, 1, 0, (y) => [y ? 0x0F : 0xA5])); // 1-bit: 1 -> 255
  out('graya8.png', png(PW, PH, 8, 4, (y) => row(PW, (x) => [patGray(x, y), patAlpha(x, y)])));
  out('rgb8.png', png(PW, PH, 8, 2, (y) => row(PW, (x) => pat(x, y))));
  out('rgb16.png', png(PW, PH, 16, 2, (y) => row(PW, (x) => pat(x, y).flatMap((v) => hi16(v, x)))));
  out('rgba8.png', png(PW, PH, 8, 6, (y) => row(PW, (x) => [...pat(x, y), patAlpha(x, y)])));
  out('rgba16.png', png(PW, PH, 16, 6, (y) => row(PW, (x) => [...pat(x, y), patAlpha(x, y)].flatMap((v) => hi16(v, x)))));
  // palette: index = (x + y) % 4, with a tRNS chunk (alpha dropped by default, as cv2.imread)
  const pal = [[200, 10, 10], [10, 200, 10], [10, 10, 200], [250, 250, 250]];
  out('palette.png', png(PW, PH, 8, 3, (y) => row(PW, (x) => [(x + y) % 4]),
    [chunk('PLTE', Buffer.from(pal.flat())), chunk('tRNS', Buffer.from([255, 128, 0, 255]))]));
  // alpha-only text: colour constant black, the "ink" is in alpha
  out('alpha_ink.png', png(PW, PH, 8, 6, (y) => row(PW, (x) => [0, 0, 0, (x === 3 || y === 2) ? 255 : 0])));

  // BMP 24-bit bottom-up
  {
    const stride = (PW * 3 + 3) & ~3, size = 54 + stride * PH, b = Buffer.alloc(size);
    b.write('BM', 0, 'latin1'); b.writeUInt32LE(size, 2); b.writeUInt32LE(54, 10); b.writeUInt32LE(40, 14);
    b.writeInt32LE(PW, 18); b.writeInt32LE(PH, 22); b.writeUInt16LE(1, 26); b.writeUInt16LE(24, 28);
    b.writeUInt32LE(stride * PH, 34);
    for (let y = 0; y < PH; y++) for (let x = 0; x < PW; x++) {
      const [r, g, bb] = pat(x, y), o = 54 + (PH - 1 - y) * stride + 3 * x;
      b[o] = bb; b[o + 1] = g; b[o + 2] = r;
    }
    out('rgb.bmp', b);
  }
  // PNM: P6 8-bit, P5 8-bit, P6 16-bit (maxval 65535)
  out('rgb.ppm', Buffer.concat([Buffer.from(`P6\n${PW} ${PH}\n255\n`), Buffer.from(Array.from({ length: PH }, (_, y) => row(PW, (x) => pat(x, y))).flat())]));
  out('gray.pgm', Buffer.concat([Buffer.from(`P5\n# comment\n${PW} ${PH}\n255\n`), Buffer.from(Array.from({ length: PH }, (_, y) => row(PW, (x) => [patGray(x, y)])).flat())]));
  out('rgb16.ppm', Buffer.concat([Buffer.from(`P6\n${PW} ${PH}\n65535\n`), Buffer.from(Array.from({ length: PH }, (_, y) => row(PW, (x) => pat(x, y).flatMap((v) => hi16(v, x)))).flat())]));
  out('ascii.pbm', Buffer.from(`P1\n2 2\n0 1\n1 0\n`));
  // TGA: uncompressed 24-bit top-left origin, and RLE 32-bit bottom-left origin
  {
    const hdr = (type, bpp, desc) => { const h = Buffer.alloc(18); h[2] = type; h.writeUInt16LE(PW, 12); h.writeUInt16LE(PH, 14); h[16] = bpp; h[17] = desc; return h; };
    const px = []; for (let y = 0; y < PH; y++) for (let x = 0; x < PW; x++) { const [r, g, b] = pat(x, y); px.push(b, g, r); }
    out('rgb.tga', Buffer.concat([hdr(2, 24, 0x20), Buffer.from(px)]));
    const rle = [];
    for (let y = PH - 1; y >= 0; y--) { // bottom-up; each row: a raw packet of PW-2 pixels, then a run of 2 copies of the last pixel
      const rowpx = []; for (let x = 0; x < PW; x++) { const [r, g, b] = pat(x, y); rowpx.push([b, g, r, patAlpha(x, y)]); }
      rle.push(PW - 3, ...rowpx.slice(0, PW - 2).flat());
      rle.push(0x80 | 1, ...rowpx[PW - 2]); // the test knows the last two pixels of a row equal pixel PW-2
    }
    out('rgba_rle.tga', Buffer.concat([hdr(10, 32, 0x08), Buffer.from(rle)]));
  }
  // GIF, two frames, 4-colour palette; frame 1 index (x + 2y) % 4, frame 2 all index 3
  {
    const pal = [[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255]];
    const lzw = (idx) => { // min code size 2: clear=4, eoi=5; a clear every 2 codes keeps codes 3 bits wide
      const codes = [];
      for (let i = 0; i < idx.length; i += 2) { codes.push(4, idx[i]); if (i + 1 < idx.length) codes.push(idx[i + 1]); }
      codes.push(5);
      const bytes = []; let acc = 0, n = 0;
      for (const c of codes) { acc |= c << n; n += 3; while (n >= 8) { bytes.push(acc & 255); acc >>= 8; n -= 8; } }
      if (n) bytes.push(acc & 255);
      const blocks = [];
      for (let i = 0; i < bytes.length; i += 255) { const s = bytes.slice(i, i + 255); blocks.push(s.length, ...s); }
      return [2, ...blocks, 0];
    };
    const frame = (idx) => [0x2C, 0, 0, 0, 0, PW, 0, PH, 0, 0, ...lzw(idx)];
    const f1 = [], f2 = [];
    for (let y = 0; y < PH; y++) for (let x = 0; x < PW; x++) { f1.push((x + 2 * y) % 4); f2.push(3); }
    const gce = [0x21, 0xF9, 4, 0, 10, 0, 0, 0];
    out('two_frames.gif', Buffer.from([...Buffer.from('GIF89a'), PW, 0, PH, 0, 0x81, 0, 0, ...pal.flat(), ...gce, ...frame(f1), ...gce, ...frame(f2), 0x3B]));
  }
}

// ---------------------------------------------------------------- JPEG: quadrants R G / B W, 32x24
async function writeJpegFixtures() {
  const W = 32, H = 24, raw = Buffer.alloc(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const q = (y >= H / 2 ? 2 : 0) + (x >= W / 2 ? 1 : 0);
    raw.set([[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]][q], 3 * (y * W + x));
  }
  const img = () => sharp(raw, { raw: { width: W, height: H, channels: 3 } });
  out('quad_baseline.jpg', await img().jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer());
  out('quad_progressive.jpg', await img().jpeg({ quality: 95, progressive: true }).toBuffer());
  out('quad_gray.jpg', await img().toColourspace('b-w').jpeg({ quality: 95 }).toBuffer());
  out('quad_cmyk.jpg', await img().toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer());
  for (let o = 1; o <= 8; o++) {
    out(`quad_exif${o}.jpg`, await img().jpeg({ quality: 95, progressive: o % 2 === 0 }).withMetadata({ orientation: o }).toBuffer());
  }
  // word_2.jpg as the reference decodes it (sharp/libjpeg-turbo): ppocr-vk's libjpeg-turbo decode must equal it
  const bgr = await refDecode(path.join(dir, 'word_2.jpg'));
  out('word_2.jpg.bgr', Buffer.from(bgr.data));
  bgr.delete();
}

// ---------------------------------------------------------------- the reference's decoder (ref_ocr.mjs readImageBGR)
async function refDecode(file) {
  const buf = fs.readFileSync(file);
  let w, h, src, ch, shift = 0;
  if (buf[0] === 0x89 && buf[1] === 0x50) {
    const p = PNG.sync.read(buf, { skipRescale: true });
    w = p.width; h = p.height; src = p.data; ch = 4;
    if (p.depth === 16) shift = 8;
    if (p.depth < 8 && (p.colorType === 0 || p.colorType === 4)) {
      const k = 255 / ((1 << p.depth) - 1);
      for (let i = 0; i < src.length; i += 4) { src[i] *= k; src[i + 1] *= k; src[i + 2] *= k; }
    }
  } else {
    const { data, info } = await sharp(buf, { ignoreIcc: true }).rotate().removeAlpha().toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    w = info.width; h = info.height; src = data; ch = info.channels;
  }
  const mat = new cv.Mat(h, w, cv.CV_8UC3);
  const d = mat.data;
  for (let i = 0, j = 0; i < w * h; i++, j += ch) {
    if (ch >= 3) { d[3 * i] = src[j + 2] >> shift; d[3 * i + 1] = src[j + 1] >> shift; d[3 * i + 2] = src[j] >> shift; }
    else d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = src[j] >> shift;
  }
  return mat;
}

// a BGR mat as an RGB PNG, so that decoding it gives the mat back
function writeMatPng(name, m) {
  const p = new PNG({ width: m.cols, height: m.rows, colorType: 2, inputColorType: 2, inputHasAlpha: false });
  const d = m.data, o = Buffer.alloc(m.cols * m.rows * 3);
  for (let i = 0; i < m.cols * m.rows; i++) { o[3 * i] = d[3 * i + 2]; o[3 * i + 1] = d[3 * i + 1]; o[3 * i + 2] = d[3 * i]; }
  p.data = o;
  out(name, PNG.sync.write(p, { colorType: 2, inputColorType: 2, inputHasAlpha: false }));
}

// deterministic noise image (LCG), for the synthetic resize cases
function noiseMat(w, h, seed) {
  const m = new cv.Mat(h, w, cv.CV_8UC3);
  let s = seed >>> 0;
  for (let i = 0; i < w * h * 3; i++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; m.data[i] = s >>> 24; }
  return m;
}

function roundHalfEven(x) { const r = Math.round(x); if (Math.abs(x % 1) === 0.5) return 2 * Math.round(x / 2); return r; }
function detSize(h, w, L = 960) {
  let ratio = 1.0;
  if (Math.max(h, w) > L) ratio = h > w ? L / h : L / w;
  let rh = Math.trunc(h * ratio), rw = Math.trunc(w * ratio);
  return [Math.max(roundHalfEven(rh / 32) * 32, 32), Math.max(roundHalfEven(rw / 32) * 32, 32)];
}

function norm2F32(ax, ay, bx, by) { const dx = f32(ax - bx), dy = f32(ay - by); return f32(Math.sqrt(f32(f32(dx * dx) + f32(dy * dy)))); }
// ref_ocr.mjs getRotateCropImage, also returning M
function rotateCrop(img, pts) {
  const fp = pts.map(([x, y]) => [f32(x), f32(y)]);
  const cw = Math.trunc(Math.max(norm2F32(...fp[0], ...fp[1]), norm2F32(...fp[2], ...fp[3])));
  const ch = Math.trunc(Math.max(norm2F32(...fp[0], ...fp[3]), norm2F32(...fp[1], ...fp[2])));
  const src = cv.matFromArray(4, 1, cv.CV_32FC2, fp.flat());
  const dst = cv.matFromArray(4, 1, cv.CV_32FC2, [0, 0, cw, 0, cw, ch, 0, ch]);
  const M = cv.getPerspectiveTransform(src, dst);
  const Mv = Array.from(M.data64F);
  let o = new cv.Mat();
  cv.warpPerspective(img, o, M, new cv.Size(cw, ch), cv.INTER_CUBIC, cv.BORDER_REPLICATE, new cv.Scalar());
  src.delete(); dst.delete(); M.delete();
  let rotated = 0;
  if ((o.rows * 1.0) / o.cols >= 1.5) { const r = new cv.Mat(); cv.rotate(o, r, cv.ROTATE_90_COUNTERCLOCKWISE); o.delete(); o = r; rotated = 1; }
  return { crop: o, M: Mv, cw, ch, rotated };
}

// ---------------------------------------------------------------- preprocessing expectations
async function writePreprocessFixtures() {
  const lines = ['# written by make.mjs: OpenCV 4.6.0 (opencv-js) results; see tests/ocr/test_preprocess_*.c'];
  // det: resize rule + cv2.resize INTER_LINEAR on real images
  for (const name of ['HelloGoogle.png', 'trainingtimes.png', 'en_word_1.png']) {
    const img = await refDecode(path.join(dir, name));
    const [rh, rw] = detSize(img.rows, img.cols);
    const rs = new cv.Mat();
    cv.resize(img, rs, new cv.Size(rw, rh));
    const outName = `det_${name.replace(/\.png$/, '')}_${rw}x${rh}.png`;
    writeMatPng(outName, rs);
    // a few normalised values, as the reference computes them (float32)
    const samples = [];
    const scale = f32(1 / 255), mean = [0.485, 0.456, 0.406].map(f32), std = [0.229, 0.224, 0.225].map(f32);
    for (const p of [0, 1, Math.floor(rw * rh / 2) + 7, rw * rh - 1]) for (let c = 0; c < 3; c++) {
      samples.push(c, p, f32(f32(f32(rs.data[3 * p + c] * scale) - mean[c]) / std[c]).toPrecision(9));
    }
    lines.push(`det ${name} ${img.cols} ${img.rows} ${rw} ${rh} ${outName} ${samples.join(' ')}`);
    rs.delete(); img.delete();
  }
  // synthetic resizes: exact 2x down (OpenCV switches to INTER_AREA), upscales, odd ratios, 1-pixel sides
  for (const [sw, sh, dw, dh, seed] of [[64, 48, 32, 24, 1], [13, 7, 40, 30, 2], [50, 40, 17, 9, 3], [9, 1, 31, 3, 4], [5, 33, 1, 48, 5], [37, 11, 192, 48, 6]]) {
    const src = noiseMat(sw, sh, seed), rs = new cv.Mat();
    cv.resize(src, rs, new cv.Size(dw, dh));
    const inName = `noise_${sw}x${sh}.png`, outName = `resize_${sw}x${sh}_to_${dw}x${dh}.png`;
    writeMatPng(inName, src); writeMatPng(outName, rs);
    lines.push(`resize ${inName} ${dw} ${dh} ${outName}`);
    src.delete(); rs.delete();
  }
  // crops: rotated, perspective, partly outside the image (BORDER_REPLICATE), tall (turned)
  const crops = [
    ['en_word_1.png', [[3, 2], [110, 6], [108, 30], [1, 27]]],
    ['en_word_1.png', [[10.5, 4.25], [70.75, 1], [75, 20.5], [12, 33]]],
    ['en_word_1.png', [[-5, -3], [120, 0], [118, 40], [-2, 36]]],
    ['en_word_1.png', [[40, 0], [60, 2], [58, 33], [41, 31]]],
    ['HelloGoogle.png', [[5, 5], [300, 20], [290, 80], [0, 70]]],
  ];
  const cache = {};
  for (const [i, [name, pts]] of crops.entries()) {
    const img = cache[name] ||= await refDecode(path.join(dir, name));
    const { crop, M, cw, ch, rotated } = rotateCrop(img, pts);
    const outName = `crop_${i}.png`;
    writeMatPng(outName, crop);
    lines.push(`crop ${name} ${pts.flat().join(' ')} ${cw} ${ch} ${rotated} ${outName} ${M.map((v) => v.toPrecision(17)).join(' ')}`);
    // rec / cls input of that crop: resized width rule and cv2.resize to 48 high, plus sampled floats
    for (const [imgH, imgW] of [[48, 192], [48, 320]]) {
      const ratio = crop.cols / crop.rows;
      const rw = Math.ceil(imgH * ratio) > imgW ? imgW : Math.ceil(imgH * ratio);
      const rs = new cv.Mat();
      cv.resize(crop, rs, new cv.Size(rw, imgH));
      const rsName = `crop_${i}_resized_${rw}x${imgH}.png`; // cls and rec share it when the width is the same
      writeMatPng(rsName, rs);
      const samples = [];
      for (const [x, y] of [[0, 0], [rw - 1, imgH - 1], [rw >> 1, 20], [imgW - 1, 47]]) for (let c = 0; c < 3; c++) {
        const v = x < rw ? f32(f32(f32(rs.data[(y * rw + x) * 3 + c] / 255) - 0.5) / 0.5) : 0;
        samples.push(c, y, x, v.toPrecision(9));
      }
      lines.push(`norm crop_${i}.png ${imgH} ${imgW} ${rw} ${rsName} ${samples.join(' ')}`);
      rs.delete();
    }
    crop.delete();
  }
  for (const m of Object.values(cache)) m.delete();
  out('expected.txt', lines.join('\n') + '\n');
}

await new Promise((resolve) => { if (cv.getBuildInformation) resolve(); else cv.onRuntimeInitialized = resolve; });
writeDecodeFixtures();
await writeJpegFixtures();
await writePreprocessFixtures();

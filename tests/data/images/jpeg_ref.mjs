// Checksums of cv2.imread's decode of every JPEG under tests/data (corpus and images), for
// test_image_decode.c's exact comparison (libjpeg-turbo in ppocr-vk must give the same bytes).
// The pixels come from ref_ocr.mjs itself (--decode-only: its readImageBGR, = cv2.imread), so the
// reference's own decode function is what is recorded, not a copy of it.
// One exception, CMYK JPEG: ref_ocr.mjs's sharp converts CMYK to sRGB with colour management, which
// cv2.imread does not do (up to 115 levels apart on quad_cmyk.jpg). For those the line holds
// cv2.imread's result instead, built from the same libjpeg-turbo samples (sharp's raw CMYK) with
// OpenCV's icvCvt_CMYK2BGR_8u_C4C3R, and is marked "cv2-cmyk".
//   REF_HOME=~/.cache/ppocr-ref node tests/data/images/jpeg_ref.mjs > tests/data/images/jpeg_ref.txt
// Line format: <path under tests/data> <width> <height> <FNV-1a 64 of the BGR bytes, hex> [cv2-cmyk]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const data = path.resolve(here, '..');
const refHome = process.env.REF_HOME || path.join(os.homedir(), '.cache/ppocr-ref');
const refScript = path.join(refHome, 'ref_ocr.mjs');
const sharp = createRequire(path.join(refHome, 'package.json'))('sharp');

function jpegsUnder(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...jpegsUnder(p));
    else if (/\.jpe?g$/i.test(e.name)) out.push(p);
  }
  return out;
}

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3)
function fnv1a64(buf) {
  let h = 0xcbf29ce484222325n;
  const mask = (1n << 64n) - 1n;
  for (const b of buf) h = ((h ^ BigInt(b)) * 0x100000001b3n) & mask;
  return h.toString(16).padStart(16, '0');
}

// ref_ocr.mjs --decode-only on one file a run (it names its output by basename, and basenames repeat)
function refDecode(file) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'jpeg_ref_'));
  execFileSync('node', [refScript, '--decode-only', tmp, file], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bgr = fs.readFileSync(path.join(tmp, `${path.basename(file)}.bgr`));
  fs.rmSync(tmp, { recursive: true });
  return bgr;
}

// libjpeg's CMYK samples as cv2.imread gets them (JCS_CMYK output). libvips inverts Adobe CMYK on
// load (to 0 = no ink); libjpeg gives it as stored (255 = no ink): undo that.
async function rawCmyk(buf, m) {
  if ((m.orientation || 1) !== 1) throw new Error('CMYK with an EXIF orientation: not handled here');
  const { data } = await sharp(buf, { ignoreIcc: true }).pipelineColourspace('cmyk').toColourspace('cmyk').raw()
    .toBuffer({ resolveWithObject: true });
  const adobe = buf.includes(Buffer.from([0xff, 0xee])) && buf.includes(Buffer.from('Adobe'));
  return adobe ? data.map((v) => 255 - v) : data;
}

// OpenCV's icvCvt_CMYK2BGR_8u_C4C3R
function cv2Cmyk(cmyk) {
  const bgr = Buffer.alloc(cmyk.length / 4 * 3);
  for (let i = 0, j = 0; i < cmyk.length; i += 4, j += 3) {
    const k = cmyk[i + 3];
    for (let c = 0; c < 3; c++) bgr[j + 2 - c] = k - (((255 - cmyk[i + c]) * k) >> 8);
  }
  return bgr;
}

const lines = ['# written by jpeg_ref.mjs: cv2.imread pixels as ref_ocr.mjs --decode-only gives them (cv2-cmyk: see the script); see test_image_decode.c'];
for (const sub of ['corpus', 'images']) {
  const files = jpegsUnder(path.join(data, sub));
  for (const file of files) {
    const buf = fs.readFileSync(file);
    const m = await sharp(buf).metadata();
    // the size as the reference shows it: EXIF orientation applied
    const turned = (m.orientation || 1) >= 5;
    const w = turned ? m.height : m.width, h = turned ? m.width : m.height;
    const cmyk = m.space === 'cmyk';
    const bgr = cmyk ? cv2Cmyk(await rawCmyk(buf, m)) : refDecode(file);
    if (bgr.length !== w * h * 3) throw new Error(`${file}: ${bgr.length} bytes for ${w}x${h}`);
    lines.push(`${path.relative(data, file)} ${w} ${h} ${fnv1a64(bgr)}${cmyk ? ' cv2-cmyk' : ''}`);
  }
}
process.stdout.write(lines.join('\n') + '\n');

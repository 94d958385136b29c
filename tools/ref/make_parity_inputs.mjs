#!/usr/bin/env node
// make_parity_inputs.mjs - the preprocessed input tensors of the parity fixtures (tests/data/parity),
// made exactly as the reference pipeline (/work/shared/reference/ref_ocr.mjs, = PaddleOCR 2.x)
// makes its network inputs: same decoder (pngjs / sharp, as cv2.imread), same cv2.resize
// (OpenCV 4.6 in JS), same float32 normalisation.
//
// Usage: node tools/ref/make_parity_inputs.mjs CORPUS_DIR OUT_DIR
// Writes OUT_DIR/{det,cls,rec_a,rec_b}_input.pvkt:
//   det    1x3x128x160: rows 80..207, columns 32..191 of tesseract/phototest.png (three text lines),
//          det normalisation (BGR, ImageNet mean/std, /255; at this size det resizes to itself)
//   cls    2x3x48x192: mmocr_words/1058892.jpg upright and paddleocr/en_word_2.png rotated 180 degrees
//          (chosen for unsaturated probabilities, 0.85 and 0.97, so that errors show)
//   rec_a  1x3x48x620: paddleocr/word_2.jpg (a long Chinese line, wider than the default 320)
//   rec_b  2x3x48x320: mmocr_words/1058892.jpg and paddleocr/en_word_2.png as one padded batch
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writePvkt } from './pvkt.mjs';

const refHome = process.env.REF_HOME || path.join(os.homedir(), '.cache', 'ppocr-ref');
const require = createRequire(path.join(refHome, 'package.json'));
const cv = require('@techstark/opencv-js');
const { PNG } = require('pngjs');
const sharp = require('sharp');
const f32 = Math.fround;

// readImageBGR of ref_ocr.mjs (cv2.imread(path) -> BGR uint8)
async function readImageBGR(file) {
  const buf = fs.readFileSync(file);
  let w, h, src, ch, shift = 0;
  if (buf[0] === 0x89 && buf[1] === 0x50 && buf[2] === 0x4e && buf[3] === 0x47) {
    const png = PNG.sync.read(buf, { skipRescale: true });
    w = png.width; h = png.height; src = png.data; ch = 4;
    if (png.depth === 16) shift = 8;
    if (png.depth < 8 && (png.colorType === 0 || png.colorType === 4)) {
      const k = 255 / ((1 << png.depth) - 1);
      for (let i = 0; i < src.length; i += 4) { src[i] *= k; src[i + 1] *= k; src[i + 2] *= k; }
    }
  } else {
    const { data, info } = await sharp(buf, { ignoreIcc: true }).rotate().removeAlpha().toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    w = info.width; h = info.height; src = data; ch = info.channels;
  }
  const mat = new cv.Mat(h, w, cv.CV_8UC3);
  const d = mat.data;
  for (let i = 0, j = 0; i < w * h; i++, j += ch) {
    if (ch >= 3) {
      d[3 * i] = src[j + 2] >> shift; d[3 * i + 1] = src[j + 1] >> shift; d[3 * i + 2] = src[j] >> shift;
    } else {
      d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = src[j] >> shift;
    }
  }
  return mat;
}

// detPreprocess of ref_ocr.mjs for an image whose sides are already multiples of 32 and <= 960
function detTensor(img) {
  const rh = img.rows, rw = img.cols;
  if (rh % 32 || rw % 32 || Math.max(rh, rw) > 960) throw new Error('det crop must be a multiple of 32, <= 960');
  const rs = new cv.Mat();
  cv.resize(img, rs, new cv.Size(rw, rh));
  const scale = f32(1 / 255);
  const mean = [0.485, 0.456, 0.406].map(f32), std = [0.229, 0.224, 0.225].map(f32);
  const plane = rh * rw, x = new Float32Array(3 * plane), s = rs.data;
  for (let p = 0; p < plane; p++)
    for (let c = 0; c < 3; c++) x[c * plane + p] = f32(f32(f32(s[3 * p + c] * scale) - mean[c]) / std[c]);
  rs.delete();
  return { data: x, dims: [1, 3, rh, rw] };
}

// resizeNormInto of ref_ocr.mjs
function resizeNormInto(img, imgH, imgW, resizedW, dst, offset) {
  const rs = new cv.Mat();
  cv.resize(img, rs, new cv.Size(resizedW, imgH));
  const s = rs.data, plane = imgH * imgW;
  for (let y = 0; y < imgH; y++)
    for (let x = 0; x < resizedW; x++) {
      const p = (y * resizedW + x) * 3;
      for (let c = 0; c < 3; c++) dst[offset + c * plane + y * imgW + x] = f32(f32(f32(s[p + c] / 255) - 0.5) / 0.5);
    }
  rs.delete();
}

// one batch as runCls / runRec build it (crops in the given order; imgW from the widest for rec)
function batchTensor(crops, imgH, baseW, widen) {
  let imgW = baseW;
  if (widen) {
    let maxWH = baseW / imgH;
    for (const m of crops) maxWH = Math.max(maxWH, (m.cols * 1.0) / m.rows);
    imgW = Math.trunc(imgH * maxWH);
  }
  const x = new Float32Array(crops.length * 3 * imgH * imgW);
  crops.forEach((m, k) => {
    const ratio = m.cols / m.rows;
    const rw = Math.ceil(imgH * ratio) > imgW ? imgW : Math.ceil(imgH * ratio);
    resizeNormInto(m, imgH, imgW, rw, x, k * 3 * imgH * imgW);
  });
  return { data: x, dims: [crops.length, 3, imgH, imgW] };
}

async function main() {
  const [corpus, out] = process.argv.slice(2);
  if (!corpus || !out) throw new Error('usage: node make_parity_inputs.mjs CORPUS_DIR OUT_DIR');
  if (!cv.getBuildInformation) await new Promise((resolve) => { cv.onRuntimeInitialized = resolve; });
  fs.mkdirSync(out, { recursive: true });
  const save = (name, t) => writePvkt(path.join(out, `${name}_input.pvkt`), t.data, t.dims);

  const page = await readImageBGR(path.join(corpus, 'tesseract/phototest.png'));
  const roi = page.roi(new cv.Rect(32, 80, 160, 128));
  const crop = roi.clone();
  save('det', detTensor(crop));

  const upright = await readImageBGR(path.join(corpus, 'mmocr_words/1058892.jpg'));
  const flipped = new cv.Mat();
  cv.rotate(await readImageBGR(path.join(corpus, 'paddleocr/en_word_2.png')), flipped, cv.ROTATE_180);
  save('cls', batchTensor([upright, flipped], 48, 192, false));

  save('rec_a', batchTensor([await readImageBGR(path.join(corpus, 'paddleocr/word_2.jpg'))], 48, 320, true));
  save('rec_b', batchTensor([await readImageBGR(path.join(corpus, 'mmocr_words/1058892.jpg')),
    await readImageBGR(path.join(corpus, 'paddleocr/en_word_2.png'))], 48, 320, true));
}

main().catch((e) => { console.error(`make_parity_inputs: ${e.message}`); process.exit(1); });

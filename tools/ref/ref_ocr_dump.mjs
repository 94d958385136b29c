#!/usr/bin/env node
// ref_ocr_dump.mjs - ref_ocr.mjs (the shared reference, /work/shared/reference) plus --dump DIR:
// per image, the inputs and outputs of the cls and rec nets for every crop, for per-net parity
// checks of ppocr-vk. A development tool. It needs the reference's installed packages
// (tools/ref/make-goldens.sh installs them into REF_HOME, default ~/.cache/ppocr-ref):
//   NODE_PATH=$REF_HOME/node_modules node tools/ref/ref_ocr_dump.mjs --models $REF_HOME/models \
//     --runs 1 --warmup 0 --quiet --dump DIR [--no-cls] [--drop-score X] IMAGE...
// The pipeline code is the original's, unchanged; the only additions are the optional `dump`
// collectors passed through ocr() -> runCls()/runRec() and the writer (writeDump).
//
// Dump format, DIR/<image-basename>/ (all binaries little-endian, C order, crops in the order of
// the sorted detection boxes, i.e. PaddleOCR's order, including crops later dropped by drop_score):
//   index.json      {image, width, height, use_angle_cls, drop_score, n_crops, cls: {...}, rec: {...},
//                    crops: [{i, box, crop_w, crop_h, crop_offset, cls_label, cls_score, cls_rotated,
//                             rec_batch, rec_width, rec_resized_w, rec_input_offset, T, C,
//                             rec_offset, text, score, kept}]}
//   crops.u8        each crop as cropped (perspective warp + the h/w >= 1.5 turn, before cls):
//                   crop_h x crop_w x 3 BGR bytes at byte offset crop_offset
//   cls_input.f32   [n_crops, 3, 48, 192] float32: the normalised, right-padded cls input of each crop
//   cls_output.f32  [n_crops, 2] float32: cls softmax (label 0, label 180)
//   rec_input.f32   per crop [3, 48, rec_width] float32 at float offset rec_input_offset; rec_width
//                   is the width of the crop's batch (batches of 6 sorted by aspect ratio), the crop
//                   fills columns [0, rec_resized_w) and the rest is zero padding
//   rec_argmax.i32  per crop [T] int32: argmax class per time step (0 = CTC blank; class k > 0 is
//                   line k of ppocr_keys_v1.txt, the last class is ' ') at int offset rec_offset
//   rec_prob.f32    per crop [T] float32: the probability of that argmax, at float offset rec_offset
// The cls files and fields are absent when the classifier is off (--no-cls).
//
// Re-implements, step by step, PaddleOCR 2.x `tools/infer/predict_system.py` with the
// defaults of `tools/infer/utility.py` (the ones PP-OCRv4 ships with), so that its output can be
// compared with a from-scratch implementation (ppocr-vk).  cv2 operations are done with
// OpenCV 4.6.0 compiled to JS (@techstark/opencv-js), polygon offsetting with clipper-lib
// (JS port of Clipper 6.4.2, the version pyclipper wraps), image decoding with pngjs / sharp.
// numpy float32 arithmetic is reproduced with Math.fround where it can change a result.
// Checked against PaddleOCR's own Python code (README.md).
//
// Output per image: [{box: [[x,y] x4], text, score, cls?: {label, score}}] in PaddleOCR's order.
// Timings (ms, model load and image decoding excluded, as PaddleOCR's time_dict): det = resize +
// normalise + inference + DB postprocess + box filtering; crop = sort + perspective crops; cls, rec =
// resize/normalise + inference + decode; total = all of it.  *_infer = time inside InferenceSession.run.
//
// Usage: node ref_ocr.mjs [options] IMAGE...
//   --models DIR     folder with ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx,
//                    ch_ppocr_mobile_v2.0_cls_infer.onnx, ppocr_keys_v1.txt
//                    (default: $PPOCR_MODELS or ./models)
//   --out DIR        write DIR/<image-basename>.json (results) and DIR/timings.json
//   --runs N         timed runs per image (default 5), taken round-robin over the images;
//                    median and min are reported
//   --warmup N       untimed runs per image before timing (default 1)
//   --no-cls         skip the angle classifier (PaddleOCR's tools/infer default is use_angle_cls=False;
//                    the paddleocr package is usually called with use_angle_cls=True; we default to ON)
//   --threads N      onnxruntime intra-op threads (default 0 = onnxruntime's default)
//   --dump-det FILE  also write the raw det probability map of the first image (float32 LE + JSON header)
//   --drop-score X   keep results with rec score >= X (default 0.5, PaddleOCR's drop_score)
//   --quiet          no per-line text on stdout
//   --decode-only D  only decode the images and write D/<file>.bgr (raw BGR bytes), to compare decoders
//   --dump DIR       write the cls/rec inputs and outputs of every crop to DIR/<basename>/ (see above)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');
const cv = require('@techstark/opencv-js');
const ClipperLib = require('clipper-lib');
const { PNG } = require('pngjs');
const sharp = require('sharp');

const f32 = Math.fround;

// ---------------------------------------------------------------- defaults (tools/infer/utility.py)
const CFG = {
  det_limit_side_len: 960,
  det_limit_type: 'max',
  det_db_thresh: 0.3,
  det_db_box_thresh: 0.6,
  det_db_unclip_ratio: 1.5,
  max_candidates: 1000,
  min_size: 3,
  det_db_score_mode: 'fast',
  det_mean: [0.485, 0.456, 0.406], // applied to channels in image order, i.e. B,G,R (PaddleOCR quirk)
  det_std: [0.229, 0.224, 0.225],
  rec_image_shape: [3, 48, 320],
  rec_batch_num: 6,
  cls_image_shape: [3, 48, 192],
  cls_batch_num: 6,
  cls_thresh: 0.9,
  cls_labels: ['0', '180'],
  drop_score: 0.5,
  use_space_char: true,
};

// ---------------------------------------------------------------- small helpers
function roundHalfEven(x) { // Python 3 round() / numpy.round
  const r = Math.round(x);
  if (Math.abs(x % 1) === 0.5) return 2 * Math.round(x / 2);
  return r;
}
function median(a) {
  const s = [...a].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
function nowMs() { return Number(process.hrtime.bigint()) / 1e6; }
// numpy float32 pairwise summation (numpy/core/src/umath/loops_utils.h.src, PW_BLOCKSIZE 128)
function npPairwiseSumF32(a, lo, n) {
  if (n < 8) {
    let res = 0; // numpy starts from -0.0; irrelevant for non-negative probabilities
    for (let i = 0; i < n; i++) res = f32(res + a[lo + i]);
    return res;
  } else if (n <= 128) {
    const r = new Array(8);
    for (let k = 0; k < 8; k++) r[k] = a[lo + k];
    let i;
    for (i = 8; i < n - (n % 8); i += 8) {
      for (let k = 0; k < 8; k++) r[k] = f32(r[k] + a[lo + i + k]);
    }
    let res = f32(f32(f32(r[0] + r[1]) + f32(r[2] + r[3])) + f32(f32(r[4] + r[5]) + f32(r[6] + r[7])));
    for (; i < n; i++) res = f32(res + a[lo + i]);
    return res;
  } else {
    let n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return f32(npPairwiseSumF32(a, lo, n2) + npPairwiseSumF32(a, lo + n2, n - n2));
  }
}
function npMeanF32(arr) { return f32(npPairwiseSumF32(arr, 0, arr.length) / arr.length); }
function norm2F32(ax, ay, bx, by) { // np.linalg.norm on a float32 2-vector
  const dx = f32(ax - bx), dy = f32(ay - by);
  return f32(Math.sqrt(f32(f32(dx * dx) + f32(dy * dy))));
}

// ---------------------------------------------------------------- image I/O (cv2.imread(path) -> BGR uint8)
// PNG: pngjs (16-bit samples keep their high byte, as libpng's png_set_strip_16 in OpenCV; gray and
// palette are expanded; alpha is dropped without compositing, as IMREAD_COLOR does).
// Anything else (JPEG, WebP, TIFF...): sharp/libvips, with EXIF auto-orientation as cv2.imread does,
// and embedded ICC profiles ignored as cv2.imread ignores them.
// Checked pixel-identical to cv2.imread on 73 real test images (1-bit gray, palette, RGBA, ICC, EXIF among them).
async function readImageBGR(file) {
  const buf = fs.readFileSync(file);
  let w, h, src, ch, shift = 0;
  if (buf[0] === 0x89 && buf[1] === 0x50 && buf[2] === 0x4e && buf[3] === 0x47) {
    const png = PNG.sync.read(buf, { skipRescale: true });
    w = png.width; h = png.height; src = png.data; ch = 4;
    if (png.depth === 16) shift = 8;
    // skipRescale also leaves 1/2/4-bit gray samples unscaled; scale them to 0..255 as libpng does
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

// ---------------------------------------------------------------- detection (predict_det.py + DBPostProcess)
function detPreprocess(img) {
  const h = img.rows, w = img.cols;
  const L = CFG.det_limit_side_len;
  let ratio = 1.0;
  if (CFG.det_limit_type === 'max') {
    if (Math.max(h, w) > L) ratio = h > w ? L / h : L / w;
  } else { // 'min'
    if (Math.min(h, w) < L) ratio = h < w ? L / h : L / w;
  }
  let rh = Math.trunc(h * ratio), rw = Math.trunc(w * ratio);
  rh = Math.max(roundHalfEven(rh / 32) * 32, 32);
  rw = Math.max(roundHalfEven(rw / 32) * 32, 32);
  const rs = new cv.Mat();
  cv.resize(img, rs, new cv.Size(rw, rh)); // default INTER_LINEAR, as cv2.resize(img, (w, h))
  const scale = f32(1 / 255);
  const mean = CFG.det_mean.map(f32), std = CFG.det_std.map(f32);
  const plane = rh * rw;
  const x = new Float32Array(3 * plane);
  const s = rs.data;
  for (let p = 0; p < plane; p++) {
    for (let c = 0; c < 3; c++) {
      x[c * plane + p] = f32(f32(f32(s[3 * p + c] * scale) - mean[c]) / std[c]);
    }
  }
  rs.delete();
  return { tensor: new ort.Tensor('float32', x, [1, 3, rh, rw]), rh, rw, srcH: h, srcW: w };
}

function boxPointsOf(rect) {
  // cv2.boxPoints(minAreaRect) == RotatedRect::points (float32 arithmetic inside OpenCV)
  return cv.RotatedRect.points(rect).map((p) => [f32(p.x), f32(p.y)]);
}

function getMiniBoxes(contourMat) {
  const rect = cv.minAreaRect(contourMat);
  const pts = boxPointsOf(rect);
  // sorted(list(points), key=lambda x: x[0]) - Python's sort is stable
  const points = pts.map((p, i) => [p, i]).sort((a, b) => (a[0][0] - b[0][0]) || (a[1] - b[1])).map((a) => a[0]);
  let i1, i2, i3, i4;
  if (points[1][1] > points[0][1]) { i1 = 0; i4 = 1; } else { i1 = 1; i4 = 0; }
  if (points[3][1] > points[2][1]) { i2 = 2; i3 = 3; } else { i2 = 3; i3 = 2; }
  return { box: [points[i1], points[i2], points[i3], points[i4]], sside: Math.min(rect.size.width, rect.size.height) };
}

function boxScoreFast(predMat, box) {
  const h = predMat.rows, w = predMat.cols;
  const xs = box.map((p) => p[0]), ys = box.map((p) => p[1]);
  const clip = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
  const xmin = clip(Math.floor(Math.min(...xs)), 0, w - 1);
  const xmax = clip(Math.ceil(Math.max(...xs)), 0, w - 1);
  const ymin = clip(Math.floor(Math.min(...ys)), 0, h - 1);
  const ymax = clip(Math.ceil(Math.max(...ys)), 0, h - 1);
  const mw = xmax - xmin + 1, mh = ymax - ymin + 1;
  const mask = cv.Mat.zeros(mh, mw, cv.CV_8UC1);
  const poly = [];
  for (const [px, py] of box) { poly.push(Math.trunc(f32(px - xmin)), Math.trunc(f32(py - ymin))); } // .astype(np.int32)
  const pm = cv.matFromArray(4, 1, cv.CV_32SC2, poly);
  const mv = new cv.MatVector();
  mv.push_back(pm);
  cv.fillPoly(mask, mv, new cv.Scalar(1));
  const roi = predMat.roi(new cv.Rect(xmin, ymin, mw, mh));
  const m = cv.mean(roi, mask)[0];
  roi.delete(); mv.delete(); pm.delete(); mask.delete();
  return m;
}

function unclip(box, ratio) {
  // shapely Polygon(box).area / .length in double
  let area = 0, len = 0;
  for (let i = 0; i < 4; i++) {
    const [x0, y0] = box[i], [x1, y1] = box[(i + 1) % 4];
    area += x0 * y1 - x1 * y0;
    len += Math.hypot(x1 - x0, y1 - y0);
  }
  area = Math.abs(area) / 2;
  const distance = (area * ratio) / len;
  const co = new ClipperLib.ClipperOffset(2.0, 0.25); // pyclipper defaults: miter_limit=2, arc_tolerance=0.25
  // pyclipper converts float coordinates to integers by truncation
  co.AddPath(box.map(([x, y]) => ({ X: Math.trunc(x), Y: Math.trunc(y) })), ClipperLib.JoinType.jtRound, ClipperLib.EndType.etClosedPolygon);
  const sol = new ClipperLib.Paths();
  co.Execute(sol, distance);
  return sol; // list of paths of {X,Y}
}

function dbPostprocess(pred, H, W, srcH, srcW) {
  const predMat = new cv.Mat(H, W, cv.CV_32FC1);
  predMat.data32F.set(pred);
  const bitmap = new cv.Mat(H, W, cv.CV_8UC1);
  const th = f32(CFG.det_db_thresh); // numpy: float32 array > python float compares in float32
  const bd = bitmap.data;
  for (let i = 0; i < H * W; i++) bd[i] = pred[i] > th ? 255 : 0;
  const contours = new cv.MatVector();
  const hier = new cv.Mat();
  cv.findContours(bitmap, contours, hier, cv.RETR_LIST, cv.CHAIN_APPROX_SIMPLE);
  const n = Math.min(contours.size(), CFG.max_candidates);
  const boxes = [];
  for (let k = 0; k < n; k++) {
    const contour = contours.get(k);
    const { box: points, sside } = getMiniBoxes(contour);
    contour.delete();
    if (sside < CFG.min_size) continue;
    const score = boxScoreFast(predMat, points);
    if (CFG.det_db_box_thresh > score) continue;
    const paths = unclip(points, CFG.det_db_unclip_ratio);
    const flat = [];
    for (const p of paths) for (const q of p) flat.push(q.X, q.Y); // np.array(...).reshape(-1,1,2)
    if (flat.length === 0) continue;
    const em = cv.matFromArray(flat.length / 2, 1, cv.CV_32SC2, flat);
    const mb = getMiniBoxes(em);
    em.delete();
    if (mb.sside < CFG.min_size + 2) continue;
    const out = mb.box.map(([x, y]) => {
      // float32 math as numpy 1.x does it (value-based casting keeps float32)
      const bx = Math.min(Math.max(roundHalfEven(f32(f32(x / W) * srcW)), 0), srcW);
      const by = Math.min(Math.max(roundHalfEven(f32(f32(y / H) * srcH)), 0), srcH);
      return [Math.trunc(bx), Math.trunc(by)];
    });
    boxes.push({ box: out, score });
  }
  contours.delete(); hier.delete(); bitmap.delete(); predMat.delete();
  return boxes;
}

function orderPointsClockwise(pts) {
  const s = pts.map((p) => p[0] + p[1]);
  const argmin = (a) => a.indexOf(Math.min(...a));
  const argmax = (a) => a.indexOf(Math.max(...a));
  const iMin = argmin(s), iMax = argmax(s);
  const rect = [null, null, null, null];
  rect[0] = pts[iMin];
  rect[2] = pts[iMax];
  const tmp = pts.filter((_, i) => i !== iMin && i !== iMax); // np.delete
  const diff = tmp.map((p) => p[1] - p[0]);
  rect[1] = tmp[argmin(diff)];
  rect[3] = tmp[argmax(diff)];
  return rect.map((p) => [p[0], p[1]]);
}

function filterTagDetRes(boxes, imgH, imgW) {
  const out = [];
  for (const { box } of boxes) {
    let b = orderPointsClockwise(box);
    b = b.map(([x, y]) => [Math.trunc(Math.min(Math.max(x, 0), imgW - 1)), Math.trunc(Math.min(Math.max(y, 0), imgH - 1))]);
    const rw = Math.trunc(norm2F32(b[0][0], b[0][1], b[1][0], b[1][1]));
    const rh = Math.trunc(norm2F32(b[0][0], b[0][1], b[3][0], b[3][1]));
    if (rw <= 3 || rh <= 3) continue;
    out.push(b);
  }
  return out;
}

function sortedBoxes(boxes) {
  // predict_system.sorted_boxes
  const _b = boxes.map((b, i) => [b, i]).sort((a, c) => (a[0][0][1] - c[0][0][1]) || (a[0][0][0] - c[0][0][0]) || (a[1] - c[1])).map((a) => a[0]);
  for (let i = 0; i < _b.length - 1; i++) {
    for (let j = i; j >= 0; j--) {
      if (Math.abs(_b[j + 1][0][1] - _b[j][0][1]) < 10 && _b[j + 1][0][0] < _b[j][0][0]) {
        const t = _b[j]; _b[j] = _b[j + 1]; _b[j + 1] = t;
      } else break;
    }
  }
  return _b;
}

const INFER = { det: 0, cls: 0, rec: 0 }; // time spent inside InferenceSession.run, per stage
async function timedRun(stage, sess, feeds) {
  const a = nowMs();
  const out = await sess.run(feeds);
  INFER[stage] += nowMs() - a;
  return out;
}

async function runDet(sess, img) {
  const pre = detPreprocess(img);
  const out = await timedRun('det', sess, { [sess.inputNames[0]]: pre.tensor });
  const t = out[sess.outputNames[0]];
  const [, , H, W] = t.dims;
  const raw = dbPostprocess(t.data, H, W, pre.srcH, pre.srcW);
  const boxes = filterTagDetRes(raw, img.rows, img.cols);
  return { boxes, map: { data: t.data, H, W } };
}

// ---------------------------------------------------------------- crop (utility.get_rotate_crop_image)
function getRotateCropImage(img, pts) {
  const fp = pts.map(([x, y]) => [f32(x), f32(y)]);
  const cw = Math.trunc(Math.max(norm2F32(...fp[0], ...fp[1]), norm2F32(...fp[2], ...fp[3])));
  const ch = Math.trunc(Math.max(norm2F32(...fp[0], ...fp[3]), norm2F32(...fp[1], ...fp[2])));
  const src = cv.matFromArray(4, 1, cv.CV_32FC2, fp.flat());
  const dst = cv.matFromArray(4, 1, cv.CV_32FC2, [0, 0, cw, 0, cw, ch, 0, ch]);
  const M = cv.getPerspectiveTransform(src, dst);
  let out = new cv.Mat();
  cv.warpPerspective(img, out, M, new cv.Size(cw, ch), cv.INTER_CUBIC, cv.BORDER_REPLICATE, new cv.Scalar());
  src.delete(); dst.delete(); M.delete();
  if ((out.rows * 1.0) / out.cols >= 1.5) {
    const r = new cv.Mat();
    cv.rotate(out, r, cv.ROTATE_90_COUNTERCLOCKWISE); // np.rot90
    out.delete();
    out = r;
  }
  return out;
}

// ---------------------------------------------------------------- cls / rec normalisation
function resizeNormInto(img, imgH, imgW, resizedW, dst, offset) {
  // cv2.resize(img, (resized_w, imgH)); astype(float32).transpose(2,0,1)/255; -=0.5; /=0.5; zero pad right
  const rs = new cv.Mat();
  cv.resize(img, rs, new cv.Size(resizedW, imgH));
  const s = rs.data;
  const plane = imgH * imgW;
  for (let y = 0; y < imgH; y++) {
    for (let x = 0; x < resizedW; x++) {
      const p = (y * resizedW + x) * 3;
      for (let c = 0; c < 3; c++) {
        dst[offset + c * plane + y * imgW + x] = f32(f32(f32(s[p + c] / 255) - 0.5) / 0.5);
      }
    }
  }
  rs.delete();
}

function argsortStable(vals) {
  return vals.map((v, i) => [v, i]).sort((a, b) => (a[0] - b[0]) || (a[1] - b[1])).map((a) => a[1]);
}

async function runCls(sess, crops, dump) {
  const [, imgH, imgW] = CFG.cls_image_shape;
  const n = crops.length;
  const idx = argsortStable(crops.map((m) => m.cols / m.rows));
  const res = new Array(n);
  for (let beg = 0; beg < n; beg += CFG.cls_batch_num) {
    const end = Math.min(n, beg + CFG.cls_batch_num);
    const B = end - beg;
    const x = new Float32Array(B * 3 * imgH * imgW);
    for (let k = 0; k < B; k++) {
      const m = crops[idx[beg + k]];
      const ratio = m.cols / m.rows;
      const rw = Math.ceil(imgH * ratio) > imgW ? imgW : Math.ceil(imgH * ratio);
      resizeNormInto(m, imgH, imgW, rw, x, k * 3 * imgH * imgW);
      if (dump) dump.clsInput[idx[beg + k]] = x.slice(k * 3 * imgH * imgW, (k + 1) * 3 * imgH * imgW);
    }
    const out = await timedRun('cls', sess, { [sess.inputNames[0]]: new ort.Tensor('float32', x, [B, 3, imgH, imgW]) });
    const p = out[sess.outputNames[0]].data; // [B, 2] softmax
    for (let k = 0; k < B; k++) {
      const a = p[2 * k], b = p[2 * k + 1];
      const li = b > a ? 1 : 0;
      const score = li ? b : a;
      const label = CFG.cls_labels[li];
      const j = idx[beg + k];
      res[j] = { label, score };
      if (dump) { dump.clsOutput[j] = [a, b]; dump.clsRotated[j] = label.includes('180') && score > CFG.cls_thresh; }
      if (label.includes('180') && score > CFG.cls_thresh) {
        const r = new cv.Mat();
        cv.rotate(crops[j], r, cv.ROTATE_180);
        crops[j].delete();
        crops[j] = r;
      }
    }
  }
  return res;
}

async function runRec(sess, crops, chars, dump) {
  const [, imgH, imgWBase] = CFG.rec_image_shape;
  const n = crops.length;
  const idx = argsortStable(crops.map((m) => m.cols / m.rows));
  const res = new Array(n);
  for (let beg = 0; beg < n; beg += CFG.rec_batch_num) {
    const end = Math.min(n, beg + CFG.rec_batch_num);
    const B = end - beg;
    let maxWH = imgWBase / imgH;
    for (let k = beg; k < end; k++) maxWH = Math.max(maxWH, (crops[idx[k]].cols * 1.0) / crops[idx[k]].rows);
    const imgW = Math.trunc(imgH * maxWH);
    const x = new Float32Array(B * 3 * imgH * imgW);
    for (let k = 0; k < B; k++) {
      const m = crops[idx[beg + k]];
      const ratio = m.cols / m.rows;
      const rw = Math.ceil(imgH * ratio) > imgW ? imgW : Math.ceil(imgH * ratio);
      resizeNormInto(m, imgH, imgW, rw, x, k * 3 * imgH * imgW);
      if (dump) {
        dump.recInput[idx[beg + k]] = {
          data: x.slice(k * 3 * imgH * imgW, (k + 1) * 3 * imgH * imgW), batch: beg / CFG.rec_batch_num, width: imgW, resizedW: rw,
        };
      }
    }
    const out = await timedRun('rec', sess, { [sess.inputNames[0]]: new ort.Tensor('float32', x, [B, 3, imgH, imgW]) });
    const t = out[sess.outputNames[0]];
    const [, T, C] = t.dims;
    const p = t.data;
    for (let k = 0; k < B; k++) {
      let text = '';
      const conf = [];
      let prev = -1;
      const argmax = dump ? new Int32Array(T) : null, prob = dump ? new Float32Array(T) : null;
      for (let s = 0; s < T; s++) {
        const base = (k * T + s) * C;
        let best = 0, bv = p[base];
        for (let c = 1; c < C; c++) if (p[base + c] > bv) { bv = p[base + c]; best = c; }
        if (dump) { argmax[s] = best; prob[s] = bv; }
        if (best !== 0 && best !== prev) { text += chars[best]; conf.push(bv); }
        prev = best;
      }
      const score = conf.length ? npMeanF32(conf) : 0;
      res[idx[beg + k]] = { text, score };
      if (dump) Object.assign(dump.recInput[idx[beg + k]], { T, C, argmax, prob });
    }
  }
  return res;
}

// ---------------------------------------------------------------- whole system (predict_system.TextSystem)
async function ocr(models, img, useCls, wantDump = false) {
  INFER.det = INFER.cls = INFER.rec = 0;
  const t0 = nowMs();
  const det = await runDet(models.det, img);
  const t1 = nowMs();
  const boxes = sortedBoxes(det.boxes);
  const crops = boxes.map((b) => getRotateCropImage(img, b));
  const t2 = nowMs();
  const dump = wantDump ? {
    boxes, crops: crops.map((m) => ({ w: m.cols, h: m.rows, data: Uint8Array.from(m.data) })),
    clsInput: [], clsOutput: [], clsRotated: [], recInput: [], cls: null, rec: null,
  } : null;
  let clsRes = null;
  if (useCls && crops.length) clsRes = await runCls(models.cls, crops, dump);
  const t3 = nowMs();
  const recRes = crops.length ? await runRec(models.rec, crops, models.chars, dump) : [];
  if (dump) { dump.cls = clsRes; dump.rec = recRes; }
  const t4 = nowMs();
  for (const c of crops) c.delete();
  const results = [];
  boxes.forEach((b, i) => {
    if (recRes[i].score >= CFG.drop_score) {
      const r = { box: b, text: recRes[i].text, score: recRes[i].score };
      if (clsRes) r.cls = { label: clsRes[i].label, score: clsRes[i].score };
      results.push(r);
    }
  });
  const t5 = nowMs();
  return {
    results,
    nDetBoxes: boxes.length,
    detMap: det.map,
    dump,
    t: { det: t1 - t0, crop: t2 - t1, cls: t3 - t2, rec: t4 - t3, total: t5 - t0, det_infer: INFER.det, cls_infer: INFER.cls, rec_infer: INFER.rec },
  };
}

function loadChars(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop(); // readlines() yields no empty last line
  const chars = ['blank', ...lines.map((l) => l.replace(/\r$/, ''))];
  if (CFG.use_space_char) chars.push(' ');
  return chars;
}

async function cvReady() {
  if (cv.getBuildInformation) return;
  await new Promise((resolve) => { cv.onRuntimeInitialized = resolve; });
}

function parseArgs(argv) {
  const o = { models: process.env.PPOCR_MODELS || path.join(path.dirname(new URL(import.meta.url).pathname), 'models'), out: null, runs: 5, warmup: 1, cls: true, threads: 0, dumpDet: null, quiet: false, images: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--models') o.models = argv[++i];
    else if (a === '--out') o.out = argv[++i];
    else if (a === '--runs') o.runs = parseInt(argv[++i], 10);
    else if (a === '--warmup') o.warmup = parseInt(argv[++i], 10);
    else if (a === '--no-cls') o.cls = false;
    else if (a === '--threads') o.threads = parseInt(argv[++i], 10);
    else if (a === '--dump-det') o.dumpDet = argv[++i];
    else if (a === '--quiet') o.quiet = true;
    else if (a === '--drop-score') CFG.drop_score = parseFloat(argv[++i]);
    else if (a === '--decode-only') o.decodeOnly = argv[++i];
    else if (a === '--dump') o.dump = argv[++i];
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else o.images.push(a);
  }
  if (!o.images.length) throw new Error('usage: node ref_ocr.mjs [--models DIR] [--out DIR] [--runs N] [--warmup N] [--no-cls] [--threads N] [--drop-score X] [--dump-det FILE] [--quiet] IMAGE...');
  return o;
}

// Writes one image's dump (format at the top of this file).
function writeDump(dir, file, img, last, useCls) {
  const d = last.dump;
  fs.mkdirSync(dir, { recursive: true });
  const n = d.boxes.length;
  const f32bytes = (arrs) => Buffer.concat(arrs.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)));
  const crops = [];
  let cropOff = 0, recOff = 0, seqOff = 0;
  for (let i = 0; i < n; i++) {
    const r = d.recInput[i];
    const e = {
      i, box: d.boxes[i], crop_w: d.crops[i].w, crop_h: d.crops[i].h, crop_offset: cropOff,
      rec_batch: r.batch, rec_width: r.width, rec_resized_w: r.resizedW, rec_input_offset: recOff,
      T: r.T, C: r.C, rec_offset: seqOff, text: d.rec[i].text, score: +d.rec[i].score.toFixed(6),
      kept: d.rec[i].score >= CFG.drop_score,
    };
    if (useCls) Object.assign(e, { cls_label: d.cls[i].label, cls_score: +d.cls[i].score.toFixed(6), cls_rotated: d.clsRotated[i] });
    crops.push(e);
    cropOff += d.crops[i].data.length;
    recOff += r.data.length;
    seqOff += r.T;
  }
  const [, ch, cw] = CFG.cls_image_shape;
  const index = {
    image: file, width: img.cols, height: img.rows, use_angle_cls: useCls, drop_score: CFG.drop_score, n_crops: n,
    cls: useCls ? { input: 'cls_input.f32', input_shape: [n, 3, ch, cw], output: 'cls_output.f32', output_shape: [n, 2], thresh: CFG.cls_thresh } : null,
    rec: { input: 'rec_input.f32', input_height: CFG.rec_image_shape[1], argmax: 'rec_argmax.i32', prob: 'rec_prob.f32', batch_num: CFG.rec_batch_num },
    crops,
  };
  // one crop per line: readable, and small diffs between two dumps
  const head = JSON.stringify({ ...index, crops: undefined }).slice(0, -1);
  fs.writeFileSync(path.join(dir, 'index.json'), `${head},"crops":[\n${crops.map((c) => JSON.stringify(c)).join(',\n')}\n]}\n`);
  fs.writeFileSync(path.join(dir, 'crops.u8'), Buffer.concat(d.crops.map((c) => Buffer.from(c.data))));
  if (useCls) {
    fs.writeFileSync(path.join(dir, 'cls_input.f32'), f32bytes(d.clsInput));
    fs.writeFileSync(path.join(dir, 'cls_output.f32'), f32bytes([Float32Array.from(d.clsOutput.flat())]));
  }
  fs.writeFileSync(path.join(dir, 'rec_input.f32'), f32bytes(d.recInput.map((r) => r.data)));
  fs.writeFileSync(path.join(dir, 'rec_argmax.i32'), f32bytes(d.recInput.map((r) => r.argmax)));
  fs.writeFileSync(path.join(dir, 'rec_prob.f32'), f32bytes(d.recInput.map((r) => r.prob)));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  await cvReady();
  if (o.decodeOnly) { // write each image's decoded BGR pixels (raw HxWx3) to DIR/<basename>.bgr
    fs.mkdirSync(o.decodeOnly, { recursive: true });
    for (const file of o.images) {
      const m = await readImageBGR(file);
      fs.writeFileSync(path.join(o.decodeOnly, `${path.basename(file)}.bgr`), Buffer.from(m.data));
      m.delete();
    }
    return;
  }
  const so = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  if (o.threads > 0) so.intraOpNumThreads = o.threads;
  const tl0 = nowMs();
  const models = {
    det: await ort.InferenceSession.create(path.join(o.models, 'ch_PP-OCRv4_det_infer.onnx'), so),
    rec: await ort.InferenceSession.create(path.join(o.models, 'ch_PP-OCRv4_rec_infer.onnx'), so),
    cls: o.cls ? await ort.InferenceSession.create(path.join(o.models, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'), so) : null,
    chars: loadChars(path.join(o.models, 'ppocr_keys_v1.txt')),
  };
  const loadMs = nowMs() - tl0;
  if (o.out) fs.mkdirSync(o.out, { recursive: true });
  const timings = { engine: `onnxruntime-node ${ort.env.versions?.node ?? '?'} (CPU)`, opencv_js: '4.6.0', model_load_ms: +loadMs.toFixed(1), runs: o.runs, warmup: o.warmup, use_angle_cls: o.cls, threads: o.threads || 'default', images: {} };
  // Decode everything first, warm up every image, then time round-robin (run r of every image, then
  // run r+1 ...) so that slow phases of a noisy machine are spread over all images.
  const items = [];
  for (const file of o.images) {
    const td0 = nowMs();
    const img = await readImageBGR(file);
    items.push({ file, img, decodeMs: nowMs() - td0, name: path.basename(file).replace(/\.[^.]+$/, ''), last: null,
      ts: { det: [], crop: [], cls: [], rec: [], total: [], det_infer: [], cls_infer: [], rec_infer: [] } });
  }
  for (const it of items) for (let r = 0; r < o.warmup; r++) it.last = await ocr(models, it.img, o.cls, !!o.dump);
  for (let r = 0; r < o.runs; r++) {
    for (const it of items) {
      it.last = await ocr(models, it.img, o.cls, !!o.dump);
      for (const k of Object.keys(it.ts)) it.ts[k].push(it.last.t[k]);
    }
  }
  if (!o.runs) for (const it of items) if (!it.last) it.last = await ocr(models, it.img, o.cls, !!o.dump);
  for (const it of items) {
    const { file, img, name, last, ts } = it;
    const r2 = (x) => +x.toFixed(2);
    const med = Object.fromEntries(Object.entries(ts).map(([k, v]) => [k, v.length ? r2(median(v)) : null]));
    const min = Object.fromEntries(Object.entries(ts).map(([k, v]) => [k, v.length ? r2(Math.min(...v)) : null]));
    timings.images[name] = { file, width: img.cols, height: img.rows, decode_ms: r2(it.decodeMs), det_boxes: last.nDetBoxes, kept: last.results.length, median_ms: med, min_ms: min, all_ms: Object.fromEntries(Object.entries(ts).map(([k, v]) => [k, v.map(r2)])) };
    const outRes = last.results.map((r) => ({ box: r.box, text: r.text, score: +r.score.toFixed(6), ...(r.cls ? { cls: { label: r.cls.label, score: +r.cls.score.toFixed(6) } } : {}) }));
    if (o.out) fs.writeFileSync(path.join(o.out, `${name}.json`), JSON.stringify(outRes, null, 1) + '\n');
    if (o.dump) writeDump(path.join(o.dump, name), file, img, last, o.cls);
    if (o.dumpDet && it === items[0]) {
      const { data, H, W } = last.detMap;
      fs.writeFileSync(o.dumpDet, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      fs.writeFileSync(`${o.dumpDet}.json`, JSON.stringify({ H, W, dtype: 'float32' }));
    }
    console.log(`# ${file} ${img.cols}x${img.rows} boxes=${last.nDetBoxes} kept=${last.results.length} median ms: det=${med.det} crop=${med.crop} cls=${med.cls} rec=${med.rec} total=${med.total} (min total ${min.total}; inference only: det=${med.det_infer} cls=${med.cls_infer} rec=${med.rec_infer})`);
    if (!o.quiet) for (const r of outRes) console.log(`${r.score.toFixed(4)}\t${JSON.stringify(r.box)}\t${r.text}`);
    img.delete();
  }
  if (o.out) fs.writeFileSync(path.join(o.out, 'timings.json'), JSON.stringify(timings, null, 1) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });

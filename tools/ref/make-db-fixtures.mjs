#!/usr/bin/env node
// make-db-fixtures.mjs - regenerates tests/data/db/: det probability maps and the reference's DB
// post-processing results on them, for tests/ocr/test_db_postprocess.c.
//
// For each corpus image the reference pipeline (shared/reference/ref_ocr.mjs) dumps the det net's
// probability map; the map is stored as a 16-bit grey PNG (v = round(p * 65535)), and the
// reference's own DB post-processing is then run on the stored map (p = float32(v / 65535)), so
// that the expected boxes are exact for the data the test reads. Two synthetic maps (seeded) add
// shapes with holes, touching shapes, image borders and more contours than max_candidates.
//
// The reference's functions are used as they are: the script loads a copy of ref_ocr.mjs, placed
// next to it (so that its node_modules resolve), with main() left out and its DB functions exported.
//
// Usage (from the repository root; REF_HOME is where shared/reference/setup.sh installed it):
//   node tools/ref/make-db-fixtures.mjs [--ref-home ~/.cache/ppocr-ref] [--corpus ../shared/corpus]
//                                       [--out tests/data/db]
// Output per fixture NAME: NAME.png (the map) and NAME.txt:
//   map W H image SRC_W SRC_H
//   raw N                      then N lines "x0 y0 x1 y1 x2 y2 x3 y3 score": boxes_from_bitmap output
//   final N                    then N lines, same form: after filter_tag_det_res and sorted_boxes
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const CORPUS_IMAGES = [
  ['phototest', 'tesseract/phototest.png'],
  ['00009282', 'paddleocr/00009282.jpg'],
  ['00018069', 'paddleocr/00018069.jpg'],
  ['en_word_1', 'paddleocr/en_word_1.png'],
  ['mmocr_1036169', 'mmocr_words/1036169.jpg'],
];

function parseArgs(argv) {
  const o = {
    refHome: process.env.REF_HOME || path.join(os.homedir(), '.cache/ppocr-ref'),
    corpus: path.resolve('../shared/corpus'),
    out: path.resolve('tests/data/db'),
  };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--ref-home') o.refHome = argv[++i];
    else if (argv[i] === '--corpus') o.corpus = argv[++i];
    else if (argv[i] === '--out') o.out = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!fs.existsSync(path.join(o.refHome, 'ref_ocr.mjs'))) throw new Error(`no ref_ocr.mjs in ${o.refHome}`);
  return o;
}

async function loadReference(refHome) {
  const src = fs.readFileSync(path.join(refHome, 'ref_ocr.mjs'), 'utf8');
  const mainCall = 'main().catch((e) => { console.error(e); process.exit(1); });';
  if (!src.includes(mainCall)) throw new Error('ref_ocr.mjs changed: its main() call was not found');
  const lib = src.replace(mainCall, '') +
    '\nexport { CFG, cvReady, dbPostprocess, filterTagDetRes, sortedBoxes };\n';
  const tmp = path.join(refHome, `.ref_ocr_lib_${process.pid}.mjs`);
  fs.writeFileSync(tmp, lib);
  try {
    const ref = await import(pathToFileURL(tmp).href);
    await ref.cvReady();
    return ref;
  } finally {
    fs.unlinkSync(tmp);
  }
}

function quantise(map) {
  const q = new Uint16Array(map.length);
  for (let i = 0; i < map.length; i++) q[i] = Math.min(65535, Math.max(0, Math.round(map[i] * 65535)));
  return q;
}

function dequantise(q) {
  const p = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) p[i] = q[i] / 65535; // stored as float32, as the C test does
  return p;
}

function writeMapPng(PNG, file, q, W, H) {
  const png = new PNG({ width: W, height: H, bitDepth: 16, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  png.data = Buffer.from(q.buffer, q.byteOffset, q.byteLength);
  fs.writeFileSync(file, PNG.sync.write(png, { colorType: 0, inputColorType: 0, bitDepth: 16, inputHasAlpha: false }));
  const back = PNG.sync.read(fs.readFileSync(file), { skipRescale: true });
  for (let i = 0; i < q.length; i++) {
    const v = (back.data[4 * i]); // pngjs reads 16-bit grey into the first channel as a number
    if (v !== q[i]) throw new Error(`${file}: PNG round trip differs at ${i} (${v} != ${q[i]})`);
  }
}

function boxLine(box, score) {
  return `${box.flat().join(' ')} ${score.toPrecision(17)}`;
}

function runReferenceDb(ref, p, W, H, srcW, srcH) {
  const raw = ref.dbPostprocess(p, H, W, srcH, srcW);
  const kept = [];
  for (const { box, score } of raw) {
    const f = ref.filterTagDetRes([{ box }], srcH, srcW);
    if (f.length) { f[0].score = score; kept.push(f[0]); } // array property survives sortedBoxes
  }
  const final = ref.sortedBoxes(kept);
  return { raw, final };
}

function writeFixture(outDir, name, PNG, ref, map, W, H, srcW, srcH, note) {
  const q = quantise(map);
  writeMapPng(PNG, path.join(outDir, `${name}.png`), q, W, H);
  const { raw, final } = runReferenceDb(ref, dequantise(q), W, H, srcW, srcH);
  const lines = [`# ${note}`, '# regenerate with tools/ref/make-db-fixtures.mjs; map value = png / 65535',
    `map ${W} ${H} image ${srcW} ${srcH}`, `raw ${raw.length}`];
  for (const r of raw) lines.push(boxLine(r.box, r.score));
  lines.push(`final ${final.length}`);
  for (const b of final) lines.push(boxLine(b, b.score));
  fs.writeFileSync(path.join(outDir, `${name}.txt`), lines.join('\n') + '\n');
  return { raw, final };
}

// ---------------------------------------------------------------- synthetic maps (seeded)
function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Rotated rectangles, rings (holes), ellipses, shapes cut by the borders or touching each other,
// on a noisy background that stays below the threshold.
function shapesMap(W, H, seed) {
  const rnd = mulberry32(seed);
  const m = new Float32Array(W * H);
  for (let i = 0; i < m.length; i++) m[i] = rnd() * 0.25;
  const put = (x, y, v) => { if (x >= 0 && y >= 0 && x < W && y < H) m[y * W + x] = Math.max(m[y * W + x], v); };
  const shapes = [];
  for (let k = 0; k < 36; k++) {
    shapes.push({
      kind: k % 4, cx: rnd() * W, cy: rnd() * H, a: 3 + rnd() * 18, b: 2 + rnd() * 6,
      th: (rnd() - 0.5) * Math.PI, level: 0.75 + rnd() * 0.25,
    });
  }
  shapes.push({ kind: 0, cx: 4, cy: H / 2, a: 20, b: 6, th: 0.2, level: 0.9 }); // cut by the left border
  shapes.push({ kind: 1, cx: W - 10, cy: H - 6, a: 25, b: 10, th: 0, level: 0.95 }); // ring in a corner
  shapes.push({ kind: 0, cx: W / 2, cy: 10, a: 30, b: 5, th: 0, level: 0.8 }); // two bars touching
  shapes.push({ kind: 0, cx: W / 2 + 28, cy: 17, a: 30, b: 5, th: 0.05, level: 0.85 });
  for (const s of shapes) {
    const c = Math.cos(s.th), sn = Math.sin(s.th);
    const r = Math.ceil(Math.hypot(s.a, s.b)) + 1;
    for (let y = Math.floor(s.cy - r); y <= s.cy + r; y++) {
      for (let x = Math.floor(s.cx - r); x <= s.cx + r; x++) {
        const u = (x - s.cx) * c + (y - s.cy) * sn, v = -(x - s.cx) * sn + (y - s.cy) * c;
        let inside;
        if (s.kind === 0) inside = Math.abs(u) <= s.a && Math.abs(v) <= s.b;
        else if (s.kind === 1) inside = Math.abs(u) <= s.a && Math.abs(v) <= s.b && !(Math.abs(u) <= s.a - 3 && Math.abs(v) <= s.b - 3);
        else if (s.kind === 2) inside = (u / s.a) ** 2 + (v / s.b) ** 2 <= 1;
        else inside = Math.abs(u) <= s.a && Math.abs(v) <= 1; // thin line, mostly below min size
        if (inside) put(x, y, s.level * (0.85 + 0.15 * rnd()));
      }
    }
  }
  return m;
}

// Text-like bars at the top, then a grid of isolated specks: far more contours than
// max_candidates, and OpenCV lists the specks (found last) first, so the bars are cut off.
function manyContoursMap(W, H, seed) {
  const rnd = mulberry32(seed);
  const m = new Float32Array(W * H);
  for (let i = 0; i < m.length; i++) m[i] = rnd() * 0.2;
  for (let k = 0; k < 3; k++) {
    for (let y = 4 + 12 * k; y < 12 + 12 * k; y++) for (let x = 10 + 7 * k; x < 150 - 5 * k; x++) m[y * W + x] = 0.7 + 0.3 * rnd();
  }
  for (let y = 50; y < H - 50; y += 3) for (let x = 1; x < W - 1; x += 3) m[y * W + x] = 0.5 + 0.5 * rnd();
  // a second band of bars below the specks: found last, listed first, so kept
  for (let k = 0; k < 3; k++) {
    for (let y = H - 44 + 14 * k; y < H - 36 + 14 * k; y++) for (let x = 6 + 9 * k; x < 140 - 4 * k; x++) m[y * W + x] = 0.7 + 0.3 * rnd();
  }
  return m;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const require = createRequire(path.join(o.refHome, 'ref_ocr.mjs'));
  const { PNG } = require('pngjs');
  const ref = await loadReference(o.refHome);
  fs.mkdirSync(o.out, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'db-fixtures-'));
  try {
    for (const [name, rel] of CORPUS_IMAGES) {
      const image = path.join(o.corpus, rel);
      const dump = path.join(tmp, `${name}.f32`);
      const run = spawnSync(process.execPath, [path.join(o.refHome, 'ref_ocr.mjs'), '--models', path.join(o.refHome, 'models'),
        '--out', tmp, '--runs', '0', '--warmup', '0', '--quiet', '--dump-det', dump, image], { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`reference failed on ${image}: ${run.stderr}`);
      const { H, W } = JSON.parse(fs.readFileSync(`${dump}.json`, 'utf8'));
      const buf = fs.readFileSync(dump);
      const map = new Float32Array(buf.buffer, buf.byteOffset, W * H);
      const base = path.basename(rel).replace(/\.[^.]+$/, '');
      const info = JSON.parse(fs.readFileSync(path.join(tmp, 'timings.json'), 'utf8')).images[base];
      const { final } = writeFixture(o.out, name, PNG, ref, map, W, H, info.width, info.height, `${rel}, det map of the reference`);
      // How the stored (quantised) map compares with the original: the reference's final results
      // (recognised lines only) should all be among the boxes computed from the stored map.
      const results = JSON.parse(fs.readFileSync(path.join(tmp, `${base}.json`), 'utf8'));
      const have = new Set(final.map((b) => JSON.stringify(b)));
      const found = results.filter((r) => have.has(JSON.stringify(r.box))).length;
      console.log(`${name}: map ${W}x${H}, image ${info.width}x${info.height}, final boxes ${final.length}; ` +
        `reference lines found unchanged after quantisation: ${found}/${results.length}`);
    }
    const synth = [
      ['synthetic_shapes', 200, 160, 300, 240, shapesMap(200, 160, 12345), 'seeded shapes: holes, borders, touching, thin lines; image 1.5x the map'],
      ['synthetic_many', 160, 224, 160, 224, manyContoursMap(160, 224, 777), 'seeded: bars at the top, then > max_candidates specks'],
    ];
    for (const [name, W, H, sw, sh, map, note] of synth) {
      const { raw, final } = writeFixture(o.out, name, PNG, ref, map, W, H, sw, sh, note);
      console.log(`${name}: map ${W}x${H}, raw boxes ${raw.length}, final ${final.length}`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });

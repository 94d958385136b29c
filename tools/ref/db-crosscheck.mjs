#!/usr/bin/env node
// db-crosscheck.mjs - compares src/ocr's DB post-processing with the reference's on random maps.
//
// Builds tools/ref/db_crosscheck_main.c with src/ocr's DB files (cc, into a temporary folder),
// draws seeded random probability maps (rectangles, rings, ellipses at any angle, or only at 0, 45
// and 90 degrees where minAreaRect has ties; noise below the threshold; source sizes other than
// the map's), runs both and reports every map whose boxes or scores differ.
//
// Usage (from the repository root):
//   node tools/ref/db-crosscheck.mjs [--ref-home ~/.cache/ppocr-ref] [--seed 1] [--maps 200]
//                                    [--ties] [--cc cc] [--sanitize]
// Exit status 1 when any map differs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const DB_SOURCES = ['contour', 'convex_hull', 'min_area_rect', 'poly_fill', 'polygon_offset', 'box_score',
  'db_postprocess', 'box_order'].map((n) => `src/ocr/${n}.c`);

function parseArgs(argv) {
  const o = { refHome: process.env.REF_HOME || path.join(os.homedir(), '.cache/ppocr-ref'), seed: 1, maps: 200, ties: false, cc: 'cc', sanitize: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--ref-home') o.refHome = argv[++i];
    else if (a === '--seed') o.seed = parseInt(argv[++i], 10);
    else if (a === '--maps') o.maps = parseInt(argv[++i], 10);
    else if (a === '--ties') o.ties = true;
    else if (a === '--cc') o.cc = argv[++i];
    else if (a === '--sanitize') o.sanitize = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function loadReference(refHome) { // as make-db-fixtures.mjs: the reference's own functions
  const src = fs.readFileSync(path.join(refHome, 'ref_ocr.mjs'), 'utf8');
  const mainCall = 'main().catch((e) => { console.error(e); process.exit(1); });';
  if (!src.includes(mainCall)) throw new Error('ref_ocr.mjs changed: its main() call was not found');
  const tmp = path.join(refHome, `.ref_ocr_lib_${process.pid}.mjs`);
  fs.writeFileSync(tmp, src.replace(mainCall, '') + '\nexport { cvReady, dbPostprocess };\n');
  try {
    const ref = await import(pathToFileURL(tmp).href);
    await ref.cvReady();
    return ref;
  } finally {
    fs.unlinkSync(tmp);
  }
}

function randomMap(rnd, ties) {
  const W = 16 + Math.floor(rnd() * 200), H = 16 + Math.floor(rnd() * 150);
  const srcW = Math.max(1, Math.round(W * (0.5 + rnd() * 2))), srcH = Math.max(1, Math.round(H * (0.5 + rnd() * 2)));
  const m = new Float32Array(W * H);
  for (let i = 0; i < m.length; i++) m[i] = rnd() * 0.28;
  const nShapes = 1 + Math.floor(rnd() * 25);
  for (let k = 0; k < nShapes; k++) {
    const cx = rnd() * W, cy = rnd() * H, a = 1 + rnd() * 40, b = 1 + rnd() * 10;
    const th = ties ? [0, Math.PI / 4, Math.PI / 2, -Math.PI / 4][Math.floor(rnd() * 4)] : (rnd() - 0.5) * (rnd() < 0.5 ? 0.2 : 3.2);
    const level = 0.6 + rnd() * 0.4, kind = Math.floor(rnd() * 3);
    const c = Math.cos(th), s = Math.sin(th), r = Math.ceil(Math.hypot(a, b)) + 1;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(H, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(W, cx + r); x++) {
        const u = (x - cx) * c + (y - cy) * s, v = -(x - cx) * s + (y - cy) * c;
        let inside = kind === 2 ? (u / a) ** 2 + (v / b) ** 2 <= 1 : Math.abs(u) <= a && Math.abs(v) <= b;
        if (kind === 1 && Math.abs(u) <= a - 2 && Math.abs(v) <= b - 2) inside = false; // ring: a hole contour
        if (inside) m[y * W + x] = Math.max(m[y * W + x], level * (0.8 + 0.2 * rnd()));
      }
    }
  }
  return { m, W, H, srcW, srcH };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ref = await loadReference(o.refHome);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'db-crosscheck-'));
  try {
    const exe = path.join(tmp, 'db_crosscheck');
    const flags = ['-std=c11', '-O2', '-D_DEFAULT_SOURCE', '-Isrc', ...(o.sanitize ? ['-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'] : [])];
    execFileSync(o.cc, [...flags, 'tools/ref/db_crosscheck_main.c', ...DB_SOURCES, '-lm', '-o', exe], { stdio: 'inherit' });
    let seed = o.seed >>> 0;
    const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 4294967296; };
    let differ = 0, boxes = 0;
    for (let t = 0; t < o.maps; t++) {
      const { m, W, H, srcW, srcH } = randomMap(rnd, o.ties);
      const want = ref.dbPostprocess(m, H, W, srcH, srcW).map((r) => `${r.box.flat().join(' ')} ${r.score.toPrecision(12)}`);
      const file = path.join(tmp, 'map.f32');
      fs.writeFileSync(file, Buffer.from(m.buffer));
      const got = execFileSync(exe, [file, W, H, srcW, srcH], { encoding: 'utf8' }).split('\n').filter(Boolean)
        .map((l) => { const p = l.split(' '); return `${p.slice(0, 8).join(' ')} ${Number(p[8]).toPrecision(12)}`; });
      boxes += want.length;
      if (want.join('\n') !== got.join('\n')) {
        differ++;
        console.log(`map ${t}: ${W}x${H} (image ${srcW}x${srcH})`);
        for (let i = 0; i < Math.max(want.length, got.length); i++) {
          if (want[i] !== got[i]) console.log(`  reference ${want[i] ?? '-'}\n  ours      ${got[i] ?? '-'}`);
        }
      }
    }
    console.log(`${differ} of ${o.maps} maps differ (${boxes} reference boxes; seed ${o.seed}${o.ties ? ', tie angles' : ''})`);
    process.exitCode = differ ? 1 : 0;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });

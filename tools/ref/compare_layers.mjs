#!/usr/bin/env node
// compare_layers.mjs - find the first layer where a converted net (run by ppocr-vk's CPU executor)
// leaves onnxruntime, by comparing every op's output with the ONNX value of the same name.
//
// Usage: node tools/ref/compare_layers.mjs MODEL.onnx INPUT.pvkt DUMP_DIR [--tol X] [--all]
//   DUMP_DIR   one net's layer dump: PPOCR_PARITY_DUMP=DIR build/tests/test_cpu_parity writes
//              DIR/{det,cls,rec}/index.tsv (op index, op name, op type, output tensor name, file, shape)
//              and one .pvkt per op output
//   --tol X    a layer is wrong when max |ours - ort| > X * max(1, max |ort|) (default 1e-4)
//   --all      print every compared layer, not only the first wrong one and a summary
// The converter names an op's output tensor after the ONNX value it replaces (for a fused chain:
// the last node's output), so layers are matched by tensor name; ops whose output has no ONNX
// counterpart are listed as such.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readPvkt } from './pvkt.mjs';
import { listNodes, withOutputs } from './onnx_graph.mjs';

const refHome = process.env.REF_HOME || path.join(os.homedir(), '.cache', 'ppocr-ref');
const require = createRequire(path.join(refHome, 'package.json'));
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = { tol: 1e-4, all: false, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--tol') o.tol = parseFloat(argv[++i]);
    else if (argv[i] === '--all') o.all = true;
    else if (argv[i].startsWith('--')) throw new Error(`unknown option ${argv[i]}`);
    else o.pos.push(argv[i]);
  }
  if (o.pos.length !== 3) throw new Error('usage: node compare_layers.mjs MODEL.onnx INPUT.pvkt DUMP_DIR [--tol X] [--all]');
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const [modelFile, inputFile, dumpDir] = o.pos;
  const layers = fs.readFileSync(path.join(dumpDir, 'index.tsv'), 'utf8').split('\n').filter(Boolean).map((l) => {
    const [op, name, type, tensor, file, shape] = l.split('\t');
    return { op: +op, name, type, tensor, file, shape };
  });
  const model = fs.readFileSync(modelFile);
  const nodes = listNodes(model);
  const producer = new Map();
  nodes.forEach((n, i) => n.outputs.forEach((v) => producer.set(v, { i, n })));
  const taps = [...new Set(layers.map((l) => l.tensor).filter((t) => producer.has(t)))];
  const so = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  const sess = await ort.InferenceSession.create(withOutputs(model, taps), so);
  const inp = readPvkt(inputFile);
  const res = await sess.run({ [sess.inputNames[0]]: new ort.Tensor('float32', inp.data, inp.dims) });

  let firstBad = null, compared = 0, missing = 0;
  for (const l of layers) {
    const ref = res[l.tensor];
    if (!ref) {
      missing++;
      if (o.all) console.log(`op ${l.op}\t${l.type}\t${l.name}\t${l.tensor}\t(no ONNX value of that name)`);
      continue;
    }
    const ours = readPvkt(path.join(dumpDir, l.file));
    const src = producer.get(l.tensor);
    const where = `op ${l.op} ${l.type} '${l.name}' -> '${l.tensor}' (ONNX node ${src.i} ${src.n.op} '${src.n.name}')`;
    if (ours.dims.join('x') !== ref.dims.join('x')) {
      console.log(`${where}: shape ${ours.dims.join('x')}, onnxruntime ${ref.dims.join('x')}`);
      if (!firstBad) firstBad = where;
      continue;
    }
    let maxAbs = 0, maxRef = 0, at = 0;
    for (let i = 0; i < ref.data.length; i++) {
      const d = Math.abs(Number(ours.data[i]) - Number(ref.data[i]));
      if (!(d <= maxAbs)) { maxAbs = d; at = i; }
      maxRef = Math.max(maxRef, Math.abs(Number(ref.data[i])));
    }
    compared++;
    const bad = !(maxAbs <= o.tol * Math.max(1, maxRef));
    if (o.all || (bad && !firstBad))
      console.log(`${where}: max abs ${maxAbs.toExponential(3)} at ${at} (ours ${ours.data[at]}, ort ${ref.data[at]}), max |ort| ${maxRef.toPrecision(4)}${bad ? '  <-- WRONG' : ''}`);
    if (bad && !firstBad) firstBad = where;
  }
  console.log(`${compared} layers compared, ${missing} without an ONNX counterpart; ${firstBad ? `first wrong: ${firstBad}` : 'all within tolerance'}`);
  if (firstBad) process.exit(2);
}

main().catch((e) => { console.error(`compare_layers: ${e.message}`); process.exit(1); });

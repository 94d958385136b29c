#!/usr/bin/env node
// dump_onnx.mjs - run an ONNX model on onnxruntime-node (CPU, as the reference pipeline does) on an
// input tensor read from a .pvkt file (format: tools/ref/pvkt.mjs) and write its output, and
// optionally any intermediate value, as .pvkt files. The ground truth for ppocr-vk's parity tests.
//
// Usage: node tools/ref/dump_onnx.mjs MODEL.onnx INPUT.pvkt [options]
//   --out FILE            the model's first output, as is
//   --argmax IDX MAX      the first output reduced over its last axis: index of the first maximum
//                         (int32) to IDX, the maximum (float32) to MAX (rec's [N, T, classes] is 1 MB a crop)
//   --tap NAME FILE       also the intermediate value NAME (an ONNX node output name); repeatable
//   --tap-all DIR         every non-Constant node output to DIR/NNNN.pvkt, listed in DIR/index.tsv
//                         (node index, node name, op type, output name, file, dims)
//   --list                print the nodes (index, name, op type, inputs -> outputs) and exit
// Intermediate values are exposed by appending them to the graph's outputs (onnx_graph.mjs).
// Modules come from REF_HOME (default ~/.cache/ppocr-ref), where the reference
// (/work/shared/reference/setup.sh) installs onnxruntime-node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readPvkt, writePvkt } from './pvkt.mjs';
import { listNodes, withOutputs } from './onnx_graph.mjs';

const refHome = process.env.REF_HOME || path.join(os.homedir(), '.cache', 'ppocr-ref');
const require = createRequire(path.join(refHome, 'package.json'));
const ort = require('onnxruntime-node');

// ---------------------------------------------------------------- main
function parseArgs(argv) {
  const o = { model: null, input: null, out: null, argmax: null, taps: [], tapAll: null, list: false };
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') o.out = argv[++i];
    else if (a === '--argmax') { o.argmax = [argv[i + 1], argv[i + 2]]; i += 2; }
    else if (a === '--tap') { o.taps.push([argv[i + 1], argv[i + 2]]); i += 2; }
    else if (a === '--tap-all') o.tapAll = argv[++i];
    else if (a === '--list') o.list = true;
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else pos.push(a);
  }
  [o.model, o.input] = pos;
  if (!o.model || (!o.list && !o.input) || pos.length > 2)
    throw new Error('usage: node dump_onnx.mjs MODEL.onnx INPUT.pvkt [--out FILE] [--argmax IDX MAX] [--tap NAME FILE]... [--tap-all DIR] [--list]');
  return o;
}

function argmaxLast(data, dims) {
  const c = dims[dims.length - 1], rows = data.length / c;
  const idx = new Int32Array(rows), max = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = 0;
    for (let i = 1; i < c; i++) if (data[r * c + i] > data[r * c + best]) best = i;
    idx[r] = best;
    max[r] = data[r * c + best];
  }
  return { idx, max, dims: dims.slice(0, -1) };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const model = fs.readFileSync(o.model);
  const nodes = listNodes(model);
  if (o.list) {
    nodes.forEach((n, i) => console.log(`${i}\t${n.name}\t${n.op}\t${n.inputs.join(',')} -> ${n.outputs.join(',')}`));
    return;
  }
  const taps = [...o.taps];
  const tapAll = [];
  if (o.tapAll) {
    fs.mkdirSync(o.tapAll, { recursive: true });
    nodes.forEach((n, i) => {
      if (n.op === 'Constant') return;
      n.outputs.forEach((name, k) => {
        const file = path.join(o.tapAll, `${String(i).padStart(4, '0')}${k ? `_${k}` : ''}.pvkt`);
        tapAll.push({ i, node: n, name, file });
        taps.push([name, file]);
      });
    });
  }
  const known = new Set(nodes.flatMap((n) => n.outputs));
  for (const [name] of taps) if (!known.has(name)) throw new Error(`no node output named '${name}' in ${o.model}`);

  const probe = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
  const graphOutputs = probe.outputNames;
  const extra = [...new Set(taps.map(([name]) => name).filter((n) => !graphOutputs.includes(n)))];
  const so = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' }; // as ref_ocr.mjs
  const sess = extra.length ? await ort.InferenceSession.create(withOutputs(model, extra), so)
    : await ort.InferenceSession.create(model, so);

  const inp = readPvkt(o.input);
  if (!(inp.data instanceof Float32Array)) throw new Error(`${o.input}: the input must be float32`);
  const res = await sess.run({ [sess.inputNames[0]]: new ort.Tensor('float32', inp.data, inp.dims) });
  const first = res[graphOutputs[0]];
  if (o.out) writePvkt(o.out, first.data, first.dims);
  if (o.argmax) {
    const r = argmaxLast(first.data, first.dims);
    writePvkt(o.argmax[0], r.idx, r.dims);
    writePvkt(o.argmax[1], r.max, r.dims);
  }
  for (const [name, file] of taps) {
    const t = res[name];
    const data = t.type === 'int64' ? Int32Array.from(t.data, Number) : t.data;
    if (!(data instanceof Float32Array) && !(data instanceof Int32Array)) {
      console.error(`skipping '${name}': type ${t.type}`);
      continue;
    }
    writePvkt(file, data, t.dims);
  }
  if (o.tapAll) {
    const lines = tapAll.filter((t) => fs.existsSync(t.file))
      .map((t) => `${t.i}\t${t.node.name}\t${t.node.op}\t${t.name}\t${path.basename(t.file)}\t${res[t.name].dims.join('x')}`);
    fs.writeFileSync(path.join(o.tapAll, 'index.tsv'), lines.join('\n') + '\n');
  }
}

main().catch((e) => { console.error(`dump_onnx: ${e.message}`); process.exit(1); });

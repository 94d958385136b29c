// onnx_graph.mjs - just enough protobuf walking over an ONNX ModelProto (no onnx package): list the
// graph's nodes, and append intermediate values to the graph outputs so that onnxruntime returns them.
function readVarint(buf, pos) {
  let v = 0, mul = 1, b;
  do {
    if (pos >= buf.length) throw new Error('truncated varint');
    b = buf[pos++];
    v += (b & 0x7f) * mul;
    mul *= 128;
  } while (b & 0x80);
  return [v, pos];
}
function encodeVarint(v) {
  const out = [];
  while (v >= 0x80) { out.push((v % 128) | 0x80); v = Math.floor(v / 128); }
  out.push(v);
  return Buffer.from(out);
}
// Fields of one message: {field, wire, start, end, payloadStart, payloadEnd}
function fields(buf, start = 0, end = buf.length) {
  const out = [];
  let pos = start;
  while (pos < end) {
    const fstart = pos;
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Math.floor(key / 8), wire = key & 7;
    let ps = pos, pe;
    if (wire === 0) { [, pos] = readVarint(buf, pos); pe = pos; }
    else if (wire === 1) { pos += 8; pe = pos; }
    else if (wire === 5) { pos += 4; pe = pos; }
    else if (wire === 2) { let len; [len, ps] = readVarint(buf, pos); pe = ps + len; pos = pe; }
    else throw new Error(`unsupported wire type ${wire}`);
    out.push({ field, wire, start: fstart, end: pos, payloadStart: ps, payloadEnd: pe });
  }
  return out;
}
const str = (buf, f) => buf.toString('utf8', f.payloadStart, f.payloadEnd);

function graphField(model) {
  const g = fields(model).find((f) => f.field === 7 && f.wire === 2); // ModelProto.graph
  if (!g) throw new Error('no graph in the model');
  return g;
}

export function listNodes(model) {
  const g = graphField(model);
  const nodes = [];
  for (const f of fields(model, g.payloadStart, g.payloadEnd)) {
    if (f.field !== 1 || f.wire !== 2) continue; // GraphProto.node
    const n = { name: '', op: '', inputs: [], outputs: [] };
    for (const h of fields(model, f.payloadStart, f.payloadEnd)) {
      if (h.wire !== 2) continue;
      if (h.field === 1) n.inputs.push(str(model, h));
      else if (h.field === 2) n.outputs.push(str(model, h));
      else if (h.field === 3) n.name = str(model, h);
      else if (h.field === 4) n.op = str(model, h);
    }
    nodes.push(n);
  }
  return nodes;
}

// The model bytes with `names` appended to GraphProto.output (ValueInfoProto with only a name:
// onnxruntime infers the type).
export function withOutputs(model, names) {
  if (!names.length) return model;
  const g = graphField(model);
  const extra = names.map((n) => {
    const name = Buffer.from(n, 'utf8');
    const vi = Buffer.concat([Buffer.from([0x0a]), encodeVarint(name.length), name]);
    return Buffer.concat([Buffer.from([(12 << 3) | 2]), encodeVarint(vi.length), vi]);
  });
  const payload = Buffer.concat([model.subarray(g.payloadStart, g.payloadEnd), ...extra]);
  return Buffer.concat([model.subarray(0, g.start), Buffer.from([(7 << 3) | 2]), encodeVarint(payload.length),
    payload, model.subarray(g.end)]);
}


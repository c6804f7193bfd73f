// Prints the TF op names that the installed @tensorflow/tfjs-converter maps
// to TF.js kernels, one a line, sorted: the source of jax2tf/tfjs/ops.py
// (tests/tfjs/test_ops.py compares the two).
//
//   node tools/tfjs_op_names.js
'use strict';

const fs = require('fs');
const path = require('path');

const converter = path.dirname(require.resolve('@tensorflow/tfjs-converter/package.json'));
const lists = path.join(converter, 'dist', 'operations', 'op_list');
const names = new Set();
for (const file of fs.readdirSync(lists)) {
  if (!file.endsWith('.js')) continue;
  const module = require(path.join(lists, file));
  for (const value of Object.values(module)) {
    if (Array.isArray(value)) value.forEach(op => names.add(op.tfOpName));
  }
}
process.stdout.write([...names].sort().join('\n') + '\n');

"""The frozen graph made cheaper to run, as TF's converter does before
writing a TF.js model and TF.js itself never does: constants folded
(graph_folding.py), per-channel additions and products taken into fused
convolutions and matrix products (graph_fusion.py), broadcasts that TF.js
would tile written with ops that broadcast in their kernels
(untiled_broadcasts.py), control edges that
order nothing removed, and what no output needs any more pruned. Run after the refusals
are checked, so that what is refused does not depend on which ops happen to
read constants only. The Abs that TF needs after Relu for JAX's
relu(-0.0) = +0.0 is dropped: TF.js's cpu and wasm Relu give +0.0 already.
"""

import dataclasses

import tensorflow as tf

from jax2tf.tfjs import freeze, graph_folding, graph_fusion, untiled_broadcasts


def _drop_edges_to_empty_noops(graph_def) -> None:
  """Removes control edges from NoOps without inputs. The function's outputs
  wait on one (its control outputs, empty once variables are constants):
  it orders nothing, and TF.js runs it as a node on every call, a tenth of a
  small model's time on the wasm backend."""
  empty = {node.name for node in graph_def.node if node.op == "NoOp" and not node.input}
  for node in graph_def.node:
    kept = [i for i in node.input if not (i.startswith("^") and i[1:] in empty)]
    if len(kept) != len(node.input):
      del node.input[:]
      node.input.extend(kept)


def optimize(frozen: freeze.Frozen) -> freeze.Frozen:
  graph_def = tf.compat.v1.GraphDef()
  graph_def.CopyFrom(frozen.graph_def)
  signature = [*frozen.inputs.values(), *frozen.outputs.values()]
  keep = {freeze.node_name(t.name) for t in signature}
  keep |= {check["node"] for check in frozen.shape_checks}
  graph_folding.fold_constants(graph_def, keep)
  freeze.prune(graph_def, signature)
  # Before the fusion, whose nodes (TF.js's encoding) TF cannot import.
  untiled_broadcasts.untile(graph_def)
  graph_fusion.fuse(graph_def, keep)
  graph_fusion.drop_abs_of_relu(graph_def)
  _drop_edges_to_empty_noops(graph_def)
  freeze.prune(graph_def, signature)
  return dataclasses.replace(frozen, graph_def=graph_def)

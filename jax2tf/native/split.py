"""Native serialization around `call_tf(..., call_tf_graph=True)`: a program in parts.

XlaCallModule compiles the TF functions of its `function_list` with XLA, so a
TF function that XLA cannot compile (tf.strings, tf.py_function, lookup
tables, results of data-dependent shape) fails inside it at run time. For
calls it can reach, the converted function is split instead: each such call
becomes a call of the TF function's ConcreteFunction (a PartitionedCall or
StatefulPartitionedCall in a TF graph), and each maximal run of the other
equations between them becomes a native module of its own, exported by
`exporting.export_native` like a whole function (versions, custom-call
checks, platforms, disabled checks).

Reachable means at the top level of the function's jaxpr or inside `jax.jit`
calls there (inlined, unless they declare shardings, which only one module can
carry). A call inside lax control flow, custom_jvp/custom_vjp or remat stays
inside its part and goes through `function_list` as before: a branch or a
loop body cannot be cut in two.

Values cross between parts as TF tensors, and only those that a later part,
TF call or output reads. Each part is exported with the symbolic avals of its
inputs, which all live in the function's symbolic scope; a polymorphic part
whose inputs do not have some dimension variable as a whole dimension gets
one extra argument of shape (variable, 0) per such variable, built at call
time from the function's own arguments, so that jax.export can solve it.
"""

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
import tensorflow as tf
from jax import export as jax_export
from jax.extend import core as jax_core

from jax2tf import tf_dims
from jax2tf.call_tf.functions import TfFunction, spec_of
from jax2tf.call_tf.primitive import call_tf_p
from jax2tf.internals import jax_private
from jax2tf.native import call_module
from jax2tf.native.exporting import NativeModule

_INLINED_CALLS = ("jit", "pjit", "closed_call")


@dataclasses.dataclass(frozen=True)
class _Part:
  """A native module reading `inputs` (slots) and writing `outputs`."""

  module: NativeModule
  inputs: tuple[int, ...]
  outputs: tuple[int, ...]
  # Dimension variables passed as extra (variable, 0)-shaped int32 arguments.
  carriers: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _TfCall:
  """A call of `fn` as a TF graph function."""

  fn: TfFunction
  specs: tuple  # tf.TensorSpec per input: which ConcreteFunction
  inputs: tuple[int, ...]
  outputs: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class SplitModule:
  """The converted function as parts and TF calls over numbered value slots.

  Slots 0..len(in_avals)-1 are the function's flat arguments; `constants`
  fills the slots of constants that a TF call or an output reads directly.
  Has the fields of NativeModule that the rest of `convert` reads.
  """

  in_avals: tuple
  out_avals: tuple
  in_tree: Any
  out_tree: Any
  steps: tuple
  constants: tuple  # (slot, numpy value)
  outputs: tuple[int, ...]

  @property
  def parts(self) -> list[_Part]:
    return [s for s in self.steps if isinstance(s, _Part)]

  @property
  def tf_calls(self) -> list[_TfCall]:
    return [s for s in self.steps if isinstance(s, _TfCall)]


ExportFn = Callable[..., NativeModule]  # (fun_jit, args_avals, kwargs_avals, *, fun_name)


def lower_split(
  fun_jit: Callable, args_avals: Sequence, kwargs_avals: dict, *, fun_name: str, export: ExportFn
) -> SplitModule | None:
  """The split form of `fun_jit`, or None when no call_tf_graph=True call can
  be split out (then the caller exports one module as usual)."""
  # Tracing a caller of fun_jit shows fun_jit as a jit equation, with the
  # shardings it declares among its (public) parameters. JAX's tracing cache
  # hands the same inner trace to the export that may follow.
  traced = jax.jit(lambda *a, **k: fun_jit(*a, **k)).trace(*args_avals, **kwargs_avals)
  top = traced.jaxpr
  finder = _SplitPoints()
  if not finder.contains(top):
    return None
  flat = _Flattener(finder)
  outs = flat.inline(top, list(top.invars))
  return _Builder(fun_name, export, traced, flat, outs).build()


def _is_split_point(eqn) -> bool:
  return eqn.primitive is call_tf_p and bool(eqn.params.get("call_tf_graph"))


def _unspecified(shardings) -> bool:
  return all(type(s).__name__ == "UnspecifiedValue" for s in shardings)


def _inner_jaxpr(eqn):
  """The callee of a call equation that may be inlined, else None."""
  if eqn.primitive.name not in _INLINED_CALLS:
    return None
  params = eqn.params
  if not (
    _unspecified(params.get("in_shardings", ())) and _unspecified(params.get("out_shardings", ()))
  ):
    return None
  inner = params.get("jaxpr", params.get("call_jaxpr"))
  return inner if inner is not None and hasattr(inner, "consts") else None


class _SplitPoints:
  """Which (closed) jaxprs contain a call that can be split out."""

  def __init__(self):
    self._memo: dict = {}

  def contains(self, jaxpr) -> bool:
    key = id(jaxpr)
    if key not in self._memo:
      found = any(_is_split_point(e) or self.inlines(e) is not None for e in jaxpr.eqns)
      # The jaxpr is kept so that its id is not reused while memoized.
      self._memo[key] = (jaxpr, found)
    return self._memo[key][1]

  def inlines(self, eqn):
    inner = _inner_jaxpr(eqn)
    return inner if inner is not None and self.contains(inner) else None


class _Flattener:
  """The equations of a jaxpr with the jit calls leading to split points
  inlined, over fresh variables (one callee may be inlined twice)."""

  def __init__(self, finder: _SplitPoints):
    self.finder = finder
    self.eqns: list = []
    self.consts: dict = {}  # fresh Var -> value

  def inline(self, jaxpr, args: list) -> list:
    env = {}
    for v, c in zip(jaxpr.constvars, jaxpr.consts):
      env[v] = fresh = jax_core.Var(v.aval)
      self.consts[fresh] = c
    env.update(zip(jaxpr.invars, args))
    read = lambda a: a if isinstance(a, jax_core.Literal) else env[a]
    for eqn in jaxpr.eqns:
      ins = [read(a) for a in eqn.invars]
      inner = self.finder.inlines(eqn)
      if inner is not None:
        results = self.inline(inner, ins)
      else:
        results = [
          v if isinstance(v, jax_core.DropVar) else jax_core.Var(v.aval) for v in eqn.outvars
        ]
        self.eqns.append(eqn.replace(invars=ins, outvars=results))
      env.update(
        (v, r) for v, r in zip(eqn.outvars, results) if not isinstance(v, jax_core.DropVar)
      )
    return [read(a) for a in jaxpr.outvars]


def _is_var(a) -> bool:
  return isinstance(a, jax_core.Var) and not isinstance(a, jax_core.DropVar)


def _free_and_defined(eqns) -> tuple[list, set]:
  """The variables `eqns` read from outside (in order of first use), and those
  they define."""
  free: list = []
  seen: set = set()
  defined: set = set()
  for eqn in eqns:
    for a in eqn.invars:
      if _is_var(a) and a not in defined and a not in seen:
        seen.add(a)
        free.append(a)
    defined.update(v for v in eqn.outvars if _is_var(v))
  return free, defined


def _is_symbolic(aval) -> bool:
  return any(jax_export.is_symbolic_dim(d) for d in getattr(aval, "shape", ()))


def _mentions_symbolic_dims(eqns) -> bool:
  for eqn in eqns:
    if any(_is_symbolic(v.aval) for v in (*eqn.invars, *eqn.outvars)):
      return True
    # A branch or body may build shapes from variables its operands lack.
    if any(_mentions_symbolic_dims(j.eqns) for j in jax_core.jaxprs_in_params(eqn.params)):
      return True
  return False


def _check_tf_dtype(aval, part_name: str):
  dtype = aval.dtype
  if jax.dtypes.issubdtype(dtype, jax.dtypes.extended) or dtype == jax.dtypes.float0:
    raise NotImplementedError(
      f"Cannot convert {part_name} with native serialization: a value of type "
      f"{aval.str_short()} crosses one of its call_tf(..., call_tf_graph=True) "
      "calls (it is computed before the call and used after it), and values "
      "between the parts of a split function travel as TF tensors, which have "
      f"no dtype {dtype}. Remedy: pass random keys across the call as "
      "jax.random.key_data(...) and rebuild them with jax.random.wrap_key_data, "
      "or convert with native_serialization=False."
    )


class _Builder:
  """Groups the flat equations into parts and TF calls, and exports the parts."""

  def __init__(self, fun_name: str, export: ExportFn, traced, flat: _Flattener, outs: list):
    self.fun_name = fun_name
    self.export = export
    self.flat = flat
    self.outs = outs
    top = traced.jaxpr
    self.in_avals = tuple(v.aval for v in top.invars)
    self.in_tree, self.out_tree = traced.in_tree, traced.out_tree
    self.slots = {v: i for i, v in enumerate(top.invars)}
    self._next_slot = len(self.slots)
    self.constants: list = []
    self.dim_vars = self._dimension_variables()

  def _dimension_variables(self) -> dict:
    """Each dimension variable of the function -> that variable as a dimension."""
    if not tf_dims.is_polymorphic(self.in_avals):
      return {}
    solution, _, _ = jax_private.solve_dim_vars(self.in_avals, self.in_tree)
    scope = next(d.scope for a in self.in_avals for d in a.shape if jax_export.is_symbolic_dim(d))
    return {name: jax_export.symbolic_shape(name, scope=scope)[0] for name in solution}

  # -- slots ---------------------------------------------------------------
  def _slot(self, atom) -> int:
    """The slot of a value read outside the part that computes it."""
    if _is_var(atom) and atom in self.slots:
      return self.slots[atom]
    if _is_var(atom) and atom in self.flat.consts:
      value = self.flat.consts[atom]
    elif isinstance(atom, jax_core.Literal):
      value = atom.val
    else:
      raise AssertionError(f"no value for {atom} while splitting {self.fun_name}")
    slot = self._new_slot()
    self.constants.append((slot, np.asarray(value, dtype=atom.aval.dtype)))
    if _is_var(atom):
      self.slots[atom] = slot
    return slot

  def _new_slot(self) -> int:
    self._next_slot += 1
    return self._next_slot - 1

  def _define(self, variables) -> tuple[int, ...]:
    for v in variables:
      self.slots[v] = self._new_slot()
    return tuple(self.slots[v] for v in variables)

  # -- grouping ------------------------------------------------------------
  def _groups(self) -> list:
    """(run of equations, or split point; the variables read after it), in
    order, without TF calls and runs whose results nobody reads (unless
    they have effects)."""
    groups: list = []
    for eqn in self.flat.eqns:
      if _is_split_point(eqn):
        groups.append(eqn)
      elif groups and isinstance(groups[-1], list):
        groups[-1].append(eqn)
      else:
        groups.append([eqn])
    live = {a for a in self.outs if _is_var(a)}
    kept = []
    for g in reversed(groups):
      eqns = g if isinstance(g, list) else [g]
      free, defined = _free_and_defined(eqns)
      if not (defined & live) and not any(e.effects for e in eqns):
        continue
      kept.append((g, set(live)))
      live = (live - defined) | set(free)
    kept.reverse()
    return kept

  def build(self) -> SplitModule:
    groups = self._groups()
    n_parts = sum(isinstance(g, list) for g, _ in groups)
    steps: list[_Part | _TfCall] = []
    k = 0
    for g, needed in groups:
      if isinstance(g, list):
        k += 1
        steps.append(self._part(g, needed, k, n_parts))
      else:
        steps.append(self._tf_call(g))
    outputs = tuple(self._slot(a) for a in self.outs)
    return SplitModule(
      in_avals=self.in_avals,
      out_avals=tuple(a.aval for a in self.outs),
      in_tree=self.in_tree,
      out_tree=self.out_tree,
      steps=tuple(steps),
      constants=tuple(self.constants),
      outputs=outputs,
    )

  def _tf_call(self, eqn) -> _TfCall:
    inputs = tuple(self._slot(a) for a in eqn.invars)
    outvars = [v if _is_var(v) else jax_core.Var(v.aval) for v in eqn.outvars]
    return _TfCall(
      fn=eqn.params["fn"],
      specs=tuple(spec_of(a.aval) for a in eqn.invars),
      inputs=inputs,
      outputs=self._define(outvars),
    )

  def _part(self, eqns: list, needed: set, k: int, n_parts: int) -> _Part:
    free, defined = _free_and_defined(eqns)
    consts = [v for v in free if v in self.flat.consts]
    ins = [v for v in free if v not in self.flat.consts]
    outs = [v for eqn in eqns for v in eqn.outvars if v in defined and v in needed]
    carriers = self._carriers(eqns, ins)
    name = f"{self.fun_name} (part {k} of {n_parts}, split at call_tf_graph=True calls)"
    for v in (*ins, *outs):
      _check_tf_dtype(v.aval, name)
    jaxpr = jax_core.Jaxpr(
      [],
      consts + ins,
      outs,
      eqns,
      frozenset().union(*(e.effects for e in eqns)),
      jax_core.DebugInfo(
        "jax2tf.convert",
        name,
        tuple(f"in{i}" for i in range(len(consts) + len(ins))),
        tuple(f"out{i}" for i in range(len(outs))),
      ),
    )
    const_values = [self.flat.consts[v] for v in consts]
    n_in = len(ins)

    def part_fun(*args):
      return jax.core.eval_jaxpr(jaxpr, [], *const_values, *args[:n_in])

    part_fun.__name__ = part_fun.__qualname__ = f"part_{k}_of_{n_parts}"
    avals = [
      jax.ShapeDtypeStruct(
        v.aval.shape, v.aval.dtype, weak_type=getattr(v.aval, "weak_type", False)
      )
      for v in ins
    ]
    avals += [jax.ShapeDtypeStruct((self.dim_vars[c], 0), np.int32) for c in carriers]
    try:
      module = self.export(jax.jit(part_fun), avals, {}, fun_name=name)
    except Exception as e:
      if hasattr(e, "add_note"):
        e.add_note(
          f"(while exporting part {k} of {n_parts} of {self.fun_name}: "
          "native serialization splits the function at its "
          "call_tf(..., call_tf_graph=True) calls and exports the parts "
          "between them one by one)"
        )
      raise
    return _Part(
      module=module,
      inputs=tuple(self._slot(v) for v in ins),
      outputs=self._define(outs),
      carriers=carriers,
    )

  def _carriers(self, eqns, ins) -> tuple[str, ...]:
    if not self.dim_vars or not _mentions_symbolic_dims(eqns):
      return ()
    whole = {str(d) for v in ins for d in v.aval.shape if jax_export.is_symbolic_dim(d)}
    return tuple(name for name in self.dim_vars if name not in whole)


def call_split_module(module: SplitModule, args_flat: Sequence[tf.Tensor]) -> list[tf.Tensor]:
  """Runs the parts and TF calls of `module` on the flat TF arguments."""
  values = dict(enumerate(args_flat))
  for slot, value in module.constants:
    values[slot] = tf.constant(value)
  dims = None
  for step in module.steps:
    ins = [values[s] for s in step.inputs]
    if isinstance(step, _Part):
      if step.carriers:
        if dims is None:
          dims = tf_dims.bind_dimension_variables(module.in_avals, module.in_tree, args_flat)
        ins += [tf.zeros(tf.stack([dims[c], 0]), tf.int32) for c in step.carriers]
      outs = call_module.call_native_module(step.module, ins)
    else:
      outs = step.fn.concrete(list(step.specs))(*ins)
    values.update(zip(step.outputs, outs))
  # tf.custom_gradient wants results that are not its own arguments.
  computed = {s for step in module.steps for s in step.outputs}
  return [values[s] if s in computed else tf.identity(values[s]) for s in module.outputs]

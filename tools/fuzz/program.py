"""A fuzz program as data: inputs, equations as Python source, outputs.

Each equation is one line of source (`v3 = lax.add(v1, x0)`), so that the
same program is run, shrunk by the minimizer and written into a case file
without a second representation. The source is compiled with the names of
`NAMESPACE` in scope.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import export, lax
from jax.extend import core as jax_core

from jax2tf.deploy import provenance

# What a program's source may name.
NAMESPACE = {"jax": jax, "jnp": jnp, "lax": lax, "np": np, "ml_dtypes": ml_dtypes}


@dataclasses.dataclass(frozen=True)
class Eq:
  """`out = expr`, where `expr` reads the names in `uses`."""

  out: str
  expr: str
  uses: tuple[str, ...]
  op: str  # the generator's name for the operation, for reports
  exact: bool  # JAX's result is exact given exact operands (no rounding beyond IEEE)


@dataclasses.dataclass(frozen=True)
class Program:
  """A JAX function over concrete arguments.

  args holds one tuple of arrays per concrete size of the polymorphic
  dimension "b" (a single tuple when the program is not polymorphic).
  With `grad`, the function is the gradient, with respect to every floating
  input, of the sum of the floating outputs.
  """

  inputs: tuple[str, ...]
  args: tuple[tuple[np.ndarray, ...], ...]
  eqs: tuple[Eq, ...]
  outputs: tuple[str, ...]
  polymorphic_shapes: tuple[str | None, ...] | None = None
  grad: bool = False
  name: str = "fuzz"

  @property
  def exact(self) -> bool:
    return all(e.exact for e in self.eqs) and not self.grad

  def float_inputs(self) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(self.args[0]) if _is_float(a.dtype))

  def body_source(self, name: str) -> str:
    lines = [f"def {name}({', '.join(self.inputs)}):"]
    lines += [f"  {e.out} = {e.expr}" for e in self.eqs]
    outs = ", ".join(self.outputs)
    lines.append(f"  return ({outs},)" if len(self.outputs) == 1 else f"  return ({outs})")
    return "\n".join(lines)

  def source(self) -> str:
    """`def <name>(...)`: the function the program computes."""
    if not self.grad:
      return self.body_source(self.name)
    body = f"{self.name}_body"
    argnums = self.float_inputs()
    floats = [
      f"jnp.sum(r[{i}].astype(jnp.float32))"
      for i, o in enumerate(self.outputs)
      if self.dtype_of(o) is not None and _is_float(self.dtype_of(o))
    ]
    params = ", ".join(self.inputs)
    return "\n".join(
      [
        self.body_source(body),
        "",
        "",
        f"def {self.name}({params}):",
        # The sum of the floating outputs: the scalar jax.grad needs.
        f"  loss = lambda *a: (lambda r: {' + '.join(floats)})({body}(*a))",
        f"  return jax.grad(loss, argnums={argnums!r})({params})",
      ]
    )

  def dtype_of(self, name: str):
    """The dtype of a value, from JAX's abstract evaluation."""
    return avals(self).get(name, (None, None))[1]

  def fun(self):
    return compile_source(self.source(), self.name)

  def is_valid(self) -> bool:
    """Whether the program is well typed and, with grad, differentiable."""
    if self.grad and (not self.float_inputs() or not self._float_outputs()):
      return False
    try:
      fun = self.fun()
      for args in self.args:
        jax.eval_shape(fun, *args)
      if self.polymorphic_shapes is not None:
        # Shapes that agree at each concrete size may still not agree as
        # symbols (a static 3 beside "b"): the converters trace symbolically.
        jax.eval_shape(fun, *export.symbolic_args_specs(self.args[0], self.polymorphic_shapes))
    except Exception:  # pylint: disable=broad-except
      return False
    return True

  def _float_outputs(self):
    return [o for o in self.outputs if (d := self.dtype_of(o)) is not None and _is_float(d)]


def _is_float(dtype) -> bool:
  return jnp.issubdtype(np.dtype(dtype), jnp.floating)


@functools.lru_cache(maxsize=4096)
def compile_source(source: str, name: str):
  scope = dict(NAMESPACE)
  exec(compile(source, f"<fuzz program {name}>", "exec"), scope)  # noqa: S102
  return scope[name]


def avals(program: Program) -> dict:
  """{name: (shape, dtype)} of every input and equation, at the first size."""
  return _avals(program.body_source("_body"), program.args[0], program.inputs, program.eqs)


def _avals(source, args, inputs, eqs) -> dict:
  out = {n: (a.shape, a.dtype) for n, a in zip(inputs, args)}
  if not eqs:
    return out
  # Every value of the body as an output, evaluated abstractly in one go.
  names = [e.out for e in eqs]
  lines = source.splitlines()[:-1] + [f"  return ({', '.join(names)},)"]
  try:
    results = jax.eval_shape(compile_source("\n".join(lines), "_body"), *args)
  except Exception:  # pylint: disable=broad-except
    return out
  out.update({n: (r.shape, r.dtype) for n, r in zip(names, results)})
  return out


def used(program: Program) -> Program:
  """The program without the equations and inputs no output depends on."""
  live = set(program.outputs)
  eqs = []
  for e in reversed(program.eqs):
    if e.out in live:
      eqs.append(e)
      live |= set(e.uses)
  keep = [i for i, n in enumerate(program.inputs) if n in live]
  return dataclasses.replace(
    program,
    inputs=tuple(program.inputs[i] for i in keep),
    args=tuple(tuple(a[i] for i in keep) for a in program.args),
    eqs=tuple(reversed(eqs)),
    polymorphic_shapes=None
    if program.polymorphic_shapes is None
    else tuple(program.polymorphic_shapes[i] for i in keep),
  )


def primitives(program: Program) -> set[str]:
  """The names of the JAX primitives the program's jaxpr holds, nested ones included."""
  return jaxpr_primitives(_jaxpr(program))


def value_dtypes(program: Program) -> set[np.dtype]:
  """The dtypes of every value the program computes, in nested jaxprs too."""
  return {np.dtype(v.aval.dtype) for e in provenance.equations(_jaxpr(program)) for v in e.outvars}


def multiplies_by_a_constant(program: Program) -> bool:
  """Whether the program multiplies by a value it computes from literals
  alone (zeros broadcast and padded for a gradient, say)."""
  constant: set = set()
  for eqn in provenance.equations(_jaxpr(program)):
    operands = [v for v in eqn.invars if not isinstance(v, jax_core.Literal)]
    from_constants = [v in constant for v in operands]
    if eqn.primitive.name == "mul" and (len(operands) < 2 or any(from_constants)):
      return True
    if _computed_from_constants(eqn, constant):
      constant.update(eqn.outvars)
  return False


def _computed_from_constants(eqn, constant: set) -> bool:
  """Whether an equation's results follow from literals and `constant`
  values alone: all its operands are such, or it updates such a value with
  an empty slice (whatever the slice's indices, it changes nothing)."""
  if eqn.primitive.name == "dynamic_update_slice" and 0 in eqn.invars[1].aval.shape:
    return _is_constant(eqn.invars[0], constant)
  return all(_is_constant(v, constant) for v in eqn.invars) and not any(
    provenance.inner_jaxprs(eqn)
  )


def _is_constant(v, constant: set) -> bool:
  """Whether a jaxpr value is a literal or one of the `constant` values."""
  return isinstance(v, jax_core.Literal) or v in constant


def results_with_zero_products_folded(program: Program) -> list:
  """JAX's results op by op, one per argument set, where each product with
  all-zero values computed from literals alone is zeros, whatever the other
  factor holds (inf or NaN): as TF's TFLite converter folds such products."""
  results = []
  for args in program.args:
    closed, shape = jax.make_jaxpr(program.fun(), return_shape=True)(*args)
    flat = _evaluate(closed.jaxpr, closed.consts, args, fold_zero_products=True)
    tree = jax.tree_util.tree_structure(shape)
    results.append(jax.tree_util.tree_unflatten(tree, [np.asarray(x) for x in flat]))
  return results


def operands_of(program: Program, names: frozenset[str]) -> list[tuple[str, list]] | None:
  """(primitive, operands) of each equation of the program whose primitive
  is in `names`, over every argument set, as JAX computes them op by op; or
  None where such a primitive sits in a nested computation (a loop's body,
  a branch), whose operands this does not follow."""
  found: list[tuple[str, list]] = []

  def observe(eqn, operands):
    if eqn.primitive.name in names:
      found.append((eqn.primitive.name, operands))

  for args in program.args:
    closed = jax.make_jaxpr(program.fun())(*args)
    for eqn in closed.jaxpr.eqns:
      if any(names & jaxpr_primitives(inner) for inner in provenance.inner_jaxprs(eqn)):
        return None
    _evaluate(closed.jaxpr, closed.consts, args, observe=observe)
  return found


def _evaluate(jaxpr, consts, args, *, fold_zero_products: bool = False, observe=None) -> list:
  """A jaxpr's results, equation by equation. With `fold_zero_products`, a
  product with all-zero values computed from literals alone is zeros;
  `observe(eqn, operands)` sees each equation's operands."""
  env: dict = {}
  constant: set = set(jaxpr.constvars)
  env.update(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))

  def read(v):
    return v.val if isinstance(v, jax_core.Literal) else env[v]

  for eqn in jaxpr.eqns:
    operands = [read(v) for v in eqn.invars]
    if observe is not None:
      observe(eqn, operands)
    if (
      fold_zero_products
      and eqn.primitive.name == "mul"
      and any(
        _is_constant(v, constant) and not np.any(np.asarray(x))
        for v, x in zip(eqn.invars, operands)
      )
    ):
      outs = [np.zeros(v.aval.shape, v.aval.dtype) for v in eqn.outvars]
    else:
      outs = eqn.primitive.bind(*operands, **eqn.primitive.get_bind_params(eqn.params))
      outs = outs if eqn.primitive.multiple_results else [outs]
    if _computed_from_constants(eqn, constant):
      constant.update(eqn.outvars)
    env.update(zip(eqn.outvars, outs))
  return [read(v) for v in jaxpr.outvars]


def _jaxpr(program: Program):
  return jax.make_jaxpr(program.fun())(*program.args[0]).jaxpr


def jaxpr_primitives(jaxpr) -> set[str]:
  """The primitive names of a jaxpr, with those of the jaxprs in its parameters."""
  return {eqn.primitive.name for eqn in provenance.equations(jaxpr)}

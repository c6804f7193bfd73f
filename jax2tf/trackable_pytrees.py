"""TF's trackable list, tuple and dict wrappers as JAX pytrees.

`tf.Module` stores list, tuple and dict attributes in wrapper types of TF's
checkpointing (`m.params = [tf.Variable(...)]` gives a ListWrapper), the usual
way to keep a converted model's parameters as variables. JAX's own jax2tf
registers these types with JAX's pytree registry when it is imported, so
`jax.tree_util.tree_leaves(m.params)` sees the variables; code written for it
relies on that, and this package registers them too, the same way (the leaves
in the same order, the same containers when unflattened), so that which of the
two registered first changes no result.

JAX's registry refuses a second registration of a type, and JAX's module
registers unconditionally when it is imported. Both import orders work:

* JAX's module first: its registrations stand, `register()` keeps them.
* this package first: JAX's module, if imported later (beside this package, or
  after `jax2tf.uninstall()`), is loaded with its registration of these three
  types skipped (`_UpstreamImportGuard`); everything else in it runs as usual.

Registered when this package first needs TensorFlow (the converter, call_tf),
or at `import jax2tf` and `jax2tf.install()` when JAX and TensorFlow are
imported already: `import jax2tf` alone imports neither.
"""

import contextlib
import functools
import importlib.abc
import sys
import threading

import jax
import tensorflow as tf

# JAX's implementation module: the one whose import registers the wrappers.
UPSTREAM_MODULE = "jax.experimental.jax2tf.jax2tf"

_lock = threading.Lock()
_done = False
# The wrapper types this package registered (not JAX's module).
_registered_here: set = set()


@functools.cache
def wrapper_types() -> dict:
  """TF's trackable wrapper types, each mapped to the plain type it wraps.

  Found through tf.Module's public behaviour rather than TF's private module
  that defines them."""
  m = tf.Module()
  m.as_tuple, m.as_list, m.as_dict = (tf.Module(),), [tf.Module()], {"k": tf.Module()}
  return {type(m.as_tuple): tuple, type(m.as_list): list, type(m.as_dict): dict}


def _flatten_sequence(xs):
  return tuple(xs), None


def _node_functions(wrapper: type, plain: type):
  """Flatten and unflatten functions as JAX's module gives them: sequences in
  order and unflattened to the plain type; a dict by its own (insertion)
  order of keys and unflattened to the wrapper."""
  if plain is dict:
    return (
      lambda d: (tuple(d.values()), tuple(d.keys())),
      lambda keys, values: wrapper(dict(zip(keys, values))),
    )
  return _flatten_sequence, lambda _, xs: plain(xs)


def register() -> None:
  """Registers the wrapper types with JAX's pytree registry, once; a type
  registered already (by JAX's jax2tf) keeps its registration."""
  global _done
  with _lock:
    if _done:
      return
    _done = True
    for wrapper, plain in wrapper_types().items():
      try:
        jax.tree_util.register_pytree_node(wrapper, *_node_functions(wrapper, plain))
      except ValueError as e:
        # JAX's registry says "Duplicate custom PyTreeDef type registration".
        if "uplicate" not in str(e):
          raise
        continue
      _registered_here.add(wrapper)
    if _registered_here and UPSTREAM_MODULE not in sys.modules:
      sys.meta_path.insert(0, _UpstreamImportGuard())


@contextlib.contextmanager
def _registrations_skipped(types: set):
  """`jax.tree_util.register_pytree_node` ignores `types` (already
  registered, the same way) for the duration."""
  original = jax.tree_util.register_pytree_node

  @functools.wraps(original)
  def tolerant(nodetype, *args, **kwargs):
    if nodetype in types:
      return None
    return original(nodetype, *args, **kwargs)

  jax.tree_util.register_pytree_node = tolerant
  try:
    yield
  finally:
    jax.tree_util.register_pytree_node = original


class _GuardedLoader(importlib.abc.Loader):
  """Runs JAX's module with its registration of the wrappers skipped."""

  def __init__(self, loader):
    self._loader = loader

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    with _registrations_skipped(_registered_here):
      self._loader.exec_module(module)

  def __getattr__(self, name):  # get_source, get_code, ...: for tracebacks and inspect
    return getattr(self._loader, name)


class _UpstreamImportGuard(importlib.abc.MetaPathFinder):
  """Finds JAX's jax2tf module with the other finders and guards its loading.

  When `jax.experimental.jax2tf` is this package (jax2tf.dropin), the name is
  this package's and the spec found is left alone."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname != UPSTREAM_MODULE:
      return None
    for finder in sys.meta_path:
      if finder is self or not hasattr(finder, "find_spec"):
        continue
      spec = finder.find_spec(fullname, path, target)
      if spec is not None:
        break
    else:
      return None
    loader = spec.loader
    if loader is None or type(loader).__module__.startswith("jax2tf"):
      return spec
    spec.loader = _GuardedLoader(loader)
    return spec
